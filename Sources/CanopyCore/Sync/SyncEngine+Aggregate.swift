extension SyncEngine {
    /// Starts a live aggregate: builds (or shares) the indexes of its location, order and fields
    /// and returns its value now. From the next write on, every write that changes the value
    /// queues an ``AggregateChange`` (see ``takeAggregateChanges()``).
    /// - Complexity: O(*n* log *n*) for each index to build (once per location, order and field),
    ///   else O(log *n*); then O(log *n*) per changed child of each write.
    package func listen(_ listener: AggregateListener) -> AggregateResult {
        let treeNode = self.viewRoot.descendant(listener.path.keys, create: true)!
        let location = self.node(at: listener.path)
        listener.indexes = listener.request.fields.map { field in
            let key = AggregateIndex.Key(index: listener.params.index, field: field)
            let index = treeNode.aggregates[key] ?? AggregateIndex(key, node: location)
            treeNode.aggregates[key] = index
            index.users += 1
            return index
        }
        if listener.params.limit == nil {
            listener.ranges = zip(listener.indexes, listener.request.fields).map { index, field in
                let minMax = listener.request.terms.contains { $0.field == field && ($0.function == .min || $0.function == .max) }
                return index.track(listener.params, minMax: minMax)!
            }
        }
        treeNode.aggregateListeners.append(listener)
        let value = listener.compute()
        listener.value = value
        return value
    }

    /// Stops a live aggregate; it gets no more changes, even those of writes already applied.
    @discardableResult
    package func unlisten(_ listener: AggregateListener) -> Bool {
        guard let treeNode = self.viewRoot.descendant(listener.path.keys, create: false),
            let i = treeNode.aggregateListeners.firstIndex(where: { $0 === listener })
        else { return false }
        treeNode.aggregateListeners.remove(at: i)
        for (index, range) in zip(listener.indexes, listener.ranges) { index.untrack(range) }
        listener.ranges = []
        for index in listener.indexes {
            index.users -= 1
            if index.users <= 0 { treeNode.aggregates[index.key] = nil }
        }
        listener.indexes = []
        self.aggregateChanges.removeAll { $0.listener === listener }
        self.viewRoot.prune(listener.path.keys)
        return true
    }

    /// Whether `listener` is registered.
    package func isListening(_ listener: AggregateListener) -> Bool { !listener.indexes.isEmpty }

    /// The aggregate changes queued by the writes applied since the last call, in order.
    package func takeAggregateChanges() -> [AggregateChange] {
        defer { self.aggregateChanges = [] }
        return self.aggregateChanges
    }

    /// The value of `request` over the query `params` at `path` now: O(log *n*) per field when a
    /// live aggregate keeps the indexes, else O(*n* log *n*) to build them for this read.
    package func aggregate(at path: DatabasePath, params: QueryParams, request: AggregateRequest) -> AggregateResult {
        let live = self.viewRoot.descendant(path.keys, create: false)?.aggregates
        var location: Node?
        var summaries: [AggregateSummary] = []
        for field in request.fields {
            let key = AggregateIndex.Key(index: params.index, field: field)
            if let index = live?[key] {
                summaries.append(index.summary(params))
            } else {
                if location == nil { location = self.node(at: path) }
                summaries.append(AggregateIndex(key, node: location!).summary(params))
            }
        }
        return AggregateResult(request: request, summaries: summaries)
    }

    /// After a write updated the aggregate indexes of `treeNode`: queues the new value of each of
    /// its live aggregates whose value changed.
    func refreshAggregates(of treeNode: ViewTreeNode) {
        for listener in treeNode.aggregateListeners where listener.takeMayHaveChanged() {
            let value = listener.compute()
            if !(listener.value?.sameValue(as: value) ?? false) {
                listener.value = value
                self.aggregateChanges.append(AggregateChange(listener: listener, value: value))
            }
        }
    }
}
