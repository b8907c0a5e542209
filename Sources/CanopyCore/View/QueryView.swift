/// One view: a location and query parameters, the data it currently shows (its window), and the
/// observers registered on it in registration order. Turns new data into events (spec §6.2–6.4,
/// §7.3).
///
/// An unfiltered view shows the whole node. A filtered view (range and/or limit) shows the
/// children whose ranks in the view's order fall in a window `[lo, hi)`; for a write that changed
/// one child it updates that window in O(log *n*): only the changed child and the children at the
/// old and new window edges can enter or leave it.
package final class QueryView {
    package let path: DatabasePath
    /// The parameters, boxed only when they are not the default (most views observe a plain
    /// location), which keeps a view small.
    private let paramsBox: ParamsBox?
    package var params: QueryParams { self.paramsBox?.value ?? .default }
    /// The order, and whether the view is filtered: read on every event, so kept unboxed.
    package let index: QueryIndex
    private let isFiltered: Bool

    private final class ParamsBox {
        let value: QueryParams
        init(_ value: QueryParams) { self.value = value }
    }
    /// The data shown: the whole node, or for filtered views the window's children (no priority).
    package private(set) var cache: Node
    /// Filtered views: the window's children in view order.
    private var window = SortedMap<IndexEntry, Node>()
    package private(set) var registrations: [EventRegistration] = []
    /// The shared index of the location in this view's order, when key order is not enough.
    package var childIndex: ChildIndex?

    package init(path: DatabasePath, params: QueryParams, node: Node, childIndex: ChildIndex?) {
        self.path = path
        self.paramsBox = params == .default ? nil : ParamsBox(params)
        self.index = params.index
        self.isFiltered = params.isFiltered
        self.childIndex = childIndex
        self.cache = .empty
        if params.isFiltered {
            self.cache = self.rebuildWindow(from: node)
        } else {
            self.cache = node
        }
    }

    package var isUnused: Bool { self.registrations.isEmpty }

    /// Whether this view needs a ``ChildIndex`` for `node` (key order cannot serve it).
    package func needsIndex(for node: Node) -> Bool {
        self.childIndex == nil && !self.index.isKeyOrder(for: node)
    }

    package func add(_ registration: EventRegistration) { self.registrations.append(registration) }

    package func remove(_ registration: EventRegistration) -> Bool {
        guard let i = self.registrations.firstIndex(where: { $0 === registration }) else { return false }
        self.registrations.remove(at: i)
        return true
    }

    private func order(for node: Node) -> ChildOrder {
        if let childIndex = self.childIndex { return .index(childIndex.entries) }
        return .keys(node.childMap)
    }

    private func entry(_ key: ChildKey, _ node: Node) -> IndexEntry {
        IndexEntry(sortValue: self.index.sortValue(of: node), key: key)
    }

    // MARK: - Initial events

    /// The events a new registration receives at once (spec §6.7): child_added for every child in
    /// the window, in order, or the current value.
    package func initialEvents(for registration: EventRegistration, location node: Node, into events: inout [Event]) {
        switch registration.type {
        case .childAdded:
            var previous: String? = nil
            for key in self.orderedKeys(location: node) {
                events.append(self.event(registration, .childAdded, key, self.cache.child(key), previous))
                previous = key.string
            }
        case .value:
            events.append(self.valueEvent(registration))
        case .childChanged, .childRemoved, .childMoved:
            break
        }
    }

    /// The keys shown, in view order.
    package func orderedKeys(location node: Node) -> [ChildKey] {
        if self.isFiltered { return self.window.map(\.key.key) }
        let order = self.order(for: node)
        return order.keys(in: 0..<order.count)
    }

    // MARK: - Updates

    /// Moves the view to the new data of its location and appends the events it raises.
    /// - Parameter candidates: the only children that can have changed, when the write was below
    ///   this location; then the cost is O(k log *n*) whatever the number of children.
    package func update(location newNode: Node, candidates: [ChildKey]?, into events: inout [Event]) {
        let oldCache = self.cache
        var changes: ChildChanges
        if self.isFiltered {
            if let candidates, candidates.count == 1 {
                changes = self.updateWindow(changed: candidates[0], location: newNode)
            } else {
                let newCache = self.rebuildWindow(from: newNode)
                changes = ChildChanges(old: oldCache, new: newCache, candidates: nil)
            }
            if changes.isEmpty { return }
        } else {
            if let candidates {
                changes = ChildChanges(old: oldCache, new: newNode, candidates: candidates)
                if changes.isEmpty { return }
            } else {
                if oldCache == newNode { return }
                changes = ChildChanges(old: oldCache, new: newNode, candidates: nil)
            }
            self.cache = newNode
        }
        var wantsChildEvents = false
        var wantsValue = false
        for registration in self.registrations where registration.isActive {
            if registration.type == .value { wantsValue = true } else { wantsChildEvents = true }
        }
        if wantsChildEvents && !changes.isEmpty {
            self.childEvents(changes, location: newNode, into: &events)
        }
        if wantsValue {
            for registration in self.registrations where registration.type == .value && registration.isActive {
                events.append(self.valueEvent(registration))
            }
        }
    }

    /// Recomputes the window from scratch; returns the new cache. - Complexity: O(log *n* + *w* log *w*)
    private func rebuildWindow(from node: Node) -> Node {
        let (windowNode, children) = self.order(for: node).windowNode(self.params)
        let entries = children.map { self.entry($0.key, $0.node) }
        self.window = SortedMap(sortedKeys: entries, values: children.lazy.map(\.node))
        self.cache = windowNode
        return windowNode
    }

    /// Updates the window after a write that changed only child `key`. - Complexity: O(log *n*)
    private func updateWindow(changed key: ChildKey, location node: Node) -> ChildChanges {
        let order = self.order(for: node)
        let range = order.range(self.params)
        // Who could have entered or left: the changed child and the old and new window edges.
        var keys: [ChildKey] = [key]
        if let first = self.window.first?.key.key { keys.append(first) }
        if let last = self.window.last?.key.key { keys.append(last) }
        if !range.isEmpty {
            keys.append(order.key(atRank: range.lowerBound))
            keys.append(order.key(atRank: range.upperBound - 1))
        }
        var changes = ChildChanges(old: .empty, new: .empty, candidates: [])
        var seen = Set<ChildKey>()
        for k in keys where seen.insert(k).inserted {
            let old = self.cache.child(k)
            let new = node.child(k)
            let inNew = !new.isEmpty && range.contains(order.rank(of: self.entry(k, new)))
            switch (!old.isEmpty, inNew) {
            case (true, true):
                if old != new {
                    changes.changed.append((k, old, new))
                    self.window.removeValue(forKey: self.entry(k, old))
                    self.window.updateValue(new, forKey: self.entry(k, new))
                    self.cache.setChild(k, to: new)
                }
            case (true, false):
                changes.removed.append((k, old))
                self.window.removeValue(forKey: self.entry(k, old))
                self.cache.setChild(k, to: .empty)
            case (false, true):
                changes.added.append((k, new))
                self.window.updateValue(new, forKey: self.entry(k, new))
                self.cache.setChild(k, to: new)
            case (false, false):
                break
            }
        }
        return changes
    }

    private func childEvents(_ changes: ChildChanges, location node: Node, into events: inout [Event]) {
        var changes = changes
        let index = self.index
        changes.removed.sort { IndexEntry.compare(self.entry($0.key, $0.node), self.entry($1.key, $1.node)) < 0 }
        changes.added.sort { IndexEntry.compare(self.entry($0.key, $0.node), self.entry($1.key, $1.node)) < 0 }
        changes.changed.sort { IndexEntry.compare(self.entry($0.key, $0.new), self.entry($1.key, $1.new)) < 0 }
        let order = self.isFiltered ? ChildOrder.index(self.window) : self.order(for: node)
        func previous(_ key: ChildKey, _ child: Node) -> String? {
            let rank = order.rank(of: self.entry(key, child))
            return rank == 0 ? nil : order.key(atRank: rank - 1).string
        }
        let types = Set(self.registrations.lazy.filter(\.isActive).map(\.type))
        if types.contains(.childRemoved) {
            for c in changes.removed { self.deliver(.childRemoved, c.key, c.node, nil, into: &events) }
        }
        if types.contains(.childAdded) {
            for c in changes.added { self.deliver(.childAdded, c.key, c.node, previous(c.key, c.node), into: &events) }
        }
        if types.contains(.childMoved) {
            for c in changes.changed where index.isMove(from: c.old, to: c.new) {
                self.deliver(.childMoved, c.key, c.new, previous(c.key, c.new), into: &events)
            }
        }
        if types.contains(.childChanged) {
            for c in changes.changed { self.deliver(.childChanged, c.key, c.new, previous(c.key, c.new), into: &events) }
        }
    }

    private func deliver(_ type: EventType, _ key: ChildKey, _ node: Node, _ previous: String?, into events: inout [Event]) {
        for registration in self.registrations where registration.type == type && registration.isActive {
            events.append(self.event(registration, type, key, node, previous))
        }
    }

    private func event(_ registration: EventRegistration, _ type: EventType, _ key: ChildKey, _ node: Node, _ previous: String?) -> Event {
        Event(registration: registration, type: type, path: self.path.appending(key), node: node, index: .priority, previousKey: previous)
    }

    private func valueEvent(_ registration: EventRegistration) -> Event {
        Event(registration: registration, type: .value, path: self.path, node: self.cache, index: self.index, previousKey: nil)
    }
}
