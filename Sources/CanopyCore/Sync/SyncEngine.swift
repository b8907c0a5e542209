/// The database engine: the tree, the views and indexes on it, and the events each write raises.
///
/// Pure and single-threaded: it performs no I/O and calls no user code. The library owns one per
/// database on its loop thread, applies writes in order and delivers the returned events in order.
package final class SyncEngine {
    // Unchecked exclusivity (`root`, `viewChanges`, `aggregateChanges`): the engine calls no user
    // code, and no change to these calls anything that could access them again (the closure given
    // to `root.modify` changes only the node it is handed), so the dynamic checks on every write
    // cannot fail.
    @exclusivity(unchecked) package internal(set) var root: Node
    let viewRoot = ViewTreeNode()
    private var registrationViews: [UInt64: QueryView] = [:]
    private var listenerViews: [ObjectIdentifier: QueryView] = [:]
    var pins = Set<Pin>()
    /// The ``ViewChange``s of the writes applied since the last ``takeViewChanges()``.
    @exclusivity(unchecked) var viewChanges: [ViewChange] = []
    /// The ``AggregateChange``s of the writes applied since the last ``takeAggregateChanges(into:)``.
    @exclusivity(unchecked) var aggregateChanges: [AggregateChange] = []
    /// The node the last write replaced at its location, when its own descent kept it (for an
    /// index of the parent): left for the caller to release (``takeReplaced()``), which may hand it
    /// to the thread that allocated it rather than free it here.
    @exclusivity(unchecked) var replaced = Node.empty

    /// The node the last write replaced (see `replaced`), `.empty` when none was kept; the engine
    /// lets go of it.
    package func takeReplaced() -> Node {
        var node = Node.empty
        swap(&node, &self.replaced)
        return node
    }
    /// The views anywhere in ``viewRoot``: with none, a write raises no events and skips the walk
    /// that looks for them (live aggregates alone keep indexes but no views).
    private(set) var viewCount = 0

    package init(root: Node = .empty) {
        self.root = root
    }

    /// The data at `path`.
    ///
    /// - Complexity: O(*d* log *n*)
    package func node(at path: DatabasePath) -> Node { self.root.node(at: path.keys) }

    /// The number of registrations. For tests and diagnostics.
    package var registrationCount: Int { self.registrationViews.count }

    /// The number of live indexes. For tests and diagnostics.
    package var indexCount: Int {
        func count(_ node: ViewTreeNode) -> Int { node.indexes.count + node.children.values.reduce(0) { $0 + count($1) } }
        return count(self.viewRoot)
    }

    // MARK: - Registrations

    /// Registers an observer of `params` at `path`; returns its initial events (child_added for
    /// each child shown, or the value shown).
    package func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams) -> [Event] {
        let view = self.view(at: path, params: params)
        let location = self.node(at: path)
        view.add(registration)
        self.registrationViews[registration.id] = view
        var events: [Event] = []
        view.initialEvents(for: registration, location: location, into: &events)
        return events
    }

    /// Removes one registration; its view goes away with its last registration, and an index
    /// with it when no other view uses it.
    @discardableResult
    package func unregister(_ registration: EventRegistration) -> Bool {
        registration.deactivate()
        guard let view = self.registrationViews.removeValue(forKey: registration.id) else { return false }
        _ = view.remove(registration)
        self.dropIfUnused(view)
        return true
    }

    /// Adds `listener` to the view of its location and query (sharing it with observers of the
    /// same query); returns what the view shows now. From the next write on, every write that
    /// changes what it shows queues a ``ViewChange`` for it (see ``takeViewChanges()``).
    /// - Complexity: O(log *n* + *w*) with a live index or in key order, else O(*n* log *n*) to
    ///   build the index, once per location and order.
    package func listen(_ listener: ViewListener) -> Node {
        let view = self.view(at: listener.path, params: listener.params)
        view.add(listener)
        self.listenerViews[ObjectIdentifier(listener)] = view
        return view.cache
    }

    /// Removes `listener`; it gets no more changes, even those of writes already applied.
    @discardableResult
    package func unlisten(_ listener: ViewListener) -> Bool {
        guard let view = self.listenerViews.removeValue(forKey: ObjectIdentifier(listener)) else { return false }
        _ = view.remove(listener)
        self.viewChanges.removeAll { $0.listener === listener }
        self.dropIfUnused(view)
        return true
    }

    /// Whether `listener` is registered.
    package func isListening(_ listener: ViewListener) -> Bool { self.listenerViews[ObjectIdentifier(listener)] != nil }

    /// The view changes queued by the writes applied since the last call, in the order the views
    /// were updated (the order of their events).
    package func takeViewChanges() -> [ViewChange] {
        defer { self.viewChanges = [] }
        return self.viewChanges
    }

    /// The view of `params` at `path`, created (with its index) when there is none.
    private func view(at path: DatabasePath, params: QueryParams) -> QueryView {
        let treeNode = self.viewRoot.descendant(path.keys, create: true)!
        if let existing = treeNode.views.first(where: { $0.params == params }) { return existing }
        let location = self.node(at: path)
        let index = params.index.isKeyOrder(for: location) ? nil : self.retainIndex(params.index, at: treeNode, node: location)
        let view = QueryView(path: path, params: params, node: location, childIndex: index)
        treeNode.views.append(view)
        self.viewCount += 1
        return view
    }

    /// Removes `view` once nothing uses it, and its index when no other view does.
    private func dropIfUnused(_ view: QueryView) {
        guard view.isUnused, let treeNode = self.viewRoot.descendant(view.path.keys, create: false) else { return }
        let before = treeNode.views.count
        treeNode.views.removeAll { $0 === view }
        self.viewCount -= before - treeNode.views.count
        if let index = view.childIndex { self.releaseIndex(index, at: treeNode) }
        self.viewRoot.prune(view.path.keys)
    }

    /// Every registration.
    package var allRegistrations: [EventRegistration] {
        var result: [EventRegistration] = []
        func walk(_ node: ViewTreeNode) {
            for view in node.views { result.append(contentsOf: view.registrations) }
            for child in node.children.values { walk(child) }
        }
        walk(self.viewRoot)
        return result
    }

    // MARK: - Indexes

    func retainIndex(_ order: QueryIndex, at treeNode: ViewTreeNode, node: Node) -> ChildIndex {
        let index = treeNode.indexes[order] ?? ChildIndex(index: order, node: node)
        treeNode.indexes[order] = index
        index.users += 1
        return index
    }

    func releaseIndex(_ index: ChildIndex, at treeNode: ViewTreeNode) {
        index.users -= 1
        if index.users <= 0 { treeNode.indexes[index.index] = nil }
    }

    /// Keeps (or stops keeping) the index of `params`' order at `path` alive without a view
    /// (`keepSynced`), so one-shot queries there cost O(log *n* + *k*). Idempotent per query.
    package func setPinned(_ pinned: Bool, at path: DatabasePath, params: QueryParams) {
        let pin = Pin(path: path, index: params.index)
        guard params.index != .key, pinned != self.pins.contains(pin) else { return }
        if pinned {
            self.pins.insert(pin)
            let treeNode = self.viewRoot.descendant(path.keys, create: true)!
            _ = self.retainIndex(params.index, at: treeNode, node: self.node(at: path))
        } else {
            self.pins.remove(pin)
            guard let treeNode = self.viewRoot.descendant(path.keys, create: false), let index = treeNode.indexes[params.index] else {
                return
            }
            self.releaseIndex(index, at: treeNode)
            self.viewRoot.prune(path.keys)
        }
    }

    struct Pin: Hashable {
        var path: DatabasePath
        var index: QueryIndex
    }

    // MARK: - One-shot queries

    /// The current result of a query (its window), as a `value` event would show it: O(log *n* + *k*)
    /// with a live index or in key order, else O(*n* log *n*).
    package func queryResult(at path: DatabasePath, params: QueryParams) -> Node {
        let location = self.node(at: path)
        guard params.isFiltered else { return location }
        if let index = self.viewRoot.descendant(path.keys, create: false)?.indexes[params.index] {
            return QueryWindow(params: params, order: .index(index.entries)).node
        }
        return QueryWindow.node(of: location, params: params)
    }
}
