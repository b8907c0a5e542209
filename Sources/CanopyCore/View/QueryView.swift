/// One view: a location and query parameters, the data it currently shows, and the observers
/// registered on it in registration order. Turns new data into events (spec §6.2–6.4).
package final class QueryView {
    package let path: DatabasePath
    package let params: QueryParams
    package private(set) var cache: Node
    package private(set) var registrations: [EventRegistration] = []

    package init(path: DatabasePath, params: QueryParams, node: Node) {
        self.path = path
        self.params = params
        self.cache = node
    }

    package var isUnused: Bool { self.registrations.isEmpty }

    package func add(_ registration: EventRegistration) { self.registrations.append(registration) }

    package func remove(_ registration: EventRegistration) -> Bool {
        guard let i = self.registrations.firstIndex(where: { $0 === registration }) else { return false }
        self.registrations.remove(at: i)
        return true
    }

    /// The events a new registration receives at once (spec §6.7): child_added for every child in
    /// order, or the current value.
    package func initialEvents(for registration: EventRegistration, into events: inout [Event]) {
        switch registration.type {
        case .childAdded:
            var ordered = OrderedChildren(node: self.cache, index: self.params.index)
            var previous: String? = nil
            for child in ordered.all() {
                events.append(self.event(registration, .childAdded, child.key, child.node, previous))
                previous = child.key.string
            }
        case .value:
            events.append(self.valueEvent(registration))
        case .childChanged, .childRemoved, .childMoved:
            break
        }
    }

    /// Moves the view to `newNode` and appends the events it raises, in spec order.
    /// - Parameter candidates: the only children that can have changed, when the write was below
    ///   this location; then the cost is O(k log *n*) whatever the number of children.
    package func update(to newNode: Node, candidates: [ChildKey]?, into events: inout [Event]) {
        let oldNode = self.cache
        var changes: ChildChanges
        if let candidates {
            changes = ChildChanges(old: oldNode, new: newNode, candidates: candidates)
            if changes.isEmpty { return }
        } else {
            if oldNode == newNode { return }
            changes = ChildChanges(old: oldNode, new: newNode, candidates: nil)
        }
        self.cache = newNode
        var wantsChildEvents = false
        var wantsValue = false
        for registration in self.registrations where registration.isActive {
            if registration.type == .value { wantsValue = true } else { wantsChildEvents = true }
        }
        if wantsChildEvents && !changes.isEmpty {
            self.childEvents(changes, old: oldNode, new: newNode, sorted: candidates == nil, into: &events)
        }
        if wantsValue {
            for registration in self.registrations where registration.type == .value && registration.isActive {
                events.append(self.valueEvent(registration))
            }
        }
    }

    private func childEvents(_ changes: ChildChanges, old: Node, new: Node, sorted: Bool, into events: inout [Event]) {
        var changes = changes
        let index = self.params.index
        var newOrder = OrderedChildren(node: new, index: index)
        if !sorted || !index.isKeyOrder(for: old) {
            changes.removed.sort { index.compare($0, $1) < 0 }
        }
        if !sorted || !newOrder.isKeyOrder {
            changes.added.sort { index.compare($0, $1) < 0 }
            changes.changed.sort { index.compare(($0.key, $0.new), ($1.key, $1.new)) < 0 }
        }
        let types = Set(self.registrations.lazy.filter(\.isActive).map(\.type))
        if types.contains(.childRemoved) {
            for c in changes.removed { self.deliver(.childRemoved, c.key, c.node, nil, into: &events) }
        }
        if types.contains(.childAdded) {
            for c in changes.added { self.deliver(.childAdded, c.key, c.node, newOrder.previousKey(before: c.key), into: &events) }
        }
        if types.contains(.childMoved) {
            for c in changes.changed where index.isMove(from: c.old, to: c.new) {
                self.deliver(.childMoved, c.key, c.new, newOrder.previousKey(before: c.key), into: &events)
            }
        }
        if types.contains(.childChanged) {
            for c in changes.changed { self.deliver(.childChanged, c.key, c.new, newOrder.previousKey(before: c.key), into: &events) }
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
        Event(registration: registration, type: .value, path: self.path, node: self.cache, index: self.params.index, previousKey: nil)
    }
}
