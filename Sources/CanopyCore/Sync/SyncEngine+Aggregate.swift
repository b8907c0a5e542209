extension SyncEngine {
    /// Starts a live aggregate: builds (or shares) the indexes of its location, order and fields
    /// and returns its value now. From the next write on, every write that changes the value
    /// queues an ``AggregateChange`` (see ``takeAggregateChanges(into:)``).
    /// - Complexity: O(*n*) for each range to track (count, sum and average over a range without a
    ///   limit), then O(1) per changed child of each write; with a limit, or a minimum or maximum,
    ///   O(*n* log *n*) for each tree to build (once per location, order and field), else
    ///   O(log *n*), then O(log *n*) per changed child of each write.
    package func listen(_ listener: AggregateListener) -> AggregateResult {
        let treeNode = self.viewRoot.descendant(listener.path.keys, create: true)!
        let location = self.node(at: listener.path)
        listener.indexes = listener.request.fields.map { field in
            let key = AggregateIndex.Key(index: listener.params.index, field: field)
            let index = treeNode.aggregates[key] ?? AggregateIndex(key, node: location, withTree: false)
            treeNode.aggregates[key] = index
            index.users += 1
            // A window of ranks is read from the tree.
            if listener.params.limit != nil { index.retainTree(node: location) }
            return index
        }
        if listener.params.limit == nil {
            listener.ranges = zip(listener.indexes, listener.request.fields).map { index, field in
                index.track(listener.params, minMax: listener.request.needsMinMax(field), node: location)!
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
            if listener.params.limit != nil { index.releaseTree() }
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

    /// Whether writes queued aggregate changes since the last ``takeAggregateChanges(into:)``.
    package var hasAggregateChanges: Bool { !self.aggregateChanges.isEmpty }

    /// Hands over the aggregate changes queued by the writes applied since the last call, in
    /// order, in `buffer` (which must be empty); the engine keeps `buffer`'s storage for the next
    /// ones, so a caller that hands back the same emptied buffer each time allocates none.
    package func takeAggregateChanges(into buffer: inout [AggregateChange]) {
        precondition(buffer.isEmpty, "takeAggregateChanges(into:) needs an empty buffer")
        swap(&buffer, &self.aggregateChanges)
    }

    /// The value of `request` over the query `params` at `path` now, per field: O(1) when a live
    /// aggregate tracks the range, O(log *n*) when a live aggregate keeps the tree, else O(*n*)
    /// (one pass over the children) or, with a limit, O(*n* log *n*) to build a tree for this read.
    package func aggregate(at path: DatabasePath, params: QueryParams, request: AggregateRequest) -> AggregateResult {
        let live = self.viewRoot.descendant(path.keys, create: false)?.aggregates
        var location: Node?
        var summaries: [AggregateSummary] = []
        for field in request.fields {
            let key = AggregateIndex.Key(index: params.index, field: field)
            if let summary = live?[key]?.summary(params, minMax: request.needsMinMax(field)) {
                summaries.append(summary)
            } else {
                if location == nil { location = self.node(at: path) }
                summaries.append(AggregateIndex.summary(key, params, of: location!))
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
