/// One view: a location and query parameters, the data it currently shows, and the observers
/// (and ``ViewListener``s) on it in registration order. Turns new data into events (see the Events
/// article for which events a change raises and in what order).
///
/// An unfiltered view shows the whole node. A filtered view (range and/or limit) shows its
/// ``QueryWindow``, which a write below the location updates in O(*k* log *n*) for *k* changed
/// children.
package final class QueryView {
    package let path: DatabasePath
    /// The parameters, boxed only when they are not the default (most views observe a plain
    /// location), which keeps a view small.
    private let paramsBox: ParamsBox?
    package var params: QueryParams { self.paramsBox?.value ?? .default }
    /// The order: read on every event, so kept unboxed.
    package let index: QueryIndex

    private final class ParamsBox {
        let value: QueryParams
        init(_ value: QueryParams) { self.value = value }
    }
    /// The data shown: the whole node, or for filtered views the window's children (no priority).
    package var cache: Node { self.window?.node ?? self.node }
    /// Unfiltered views: the location's data.
    private var node: Node = .empty
    /// Filtered views: the window.
    private var window: QueryWindow?
    package private(set) var registrations: [EventRegistration] = []
    package private(set) var listeners: [ViewListener] = []
    /// The shared index of the location in this view's order, when key order is not enough.
    package var childIndex: ChildIndex?

    package init(path: DatabasePath, params: QueryParams, node: Node, childIndex: ChildIndex?) {
        self.path = path
        self.paramsBox = params == .default ? nil : ParamsBox(params)
        self.index = params.index
        self.childIndex = childIndex
        if params.isFiltered {
            self.window = QueryWindow(params: params, order: Self.order(for: node, childIndex))
        } else {
            self.node = node
        }
    }

    package var isUnused: Bool { self.registrations.isEmpty && self.listeners.isEmpty }

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

    package func add(_ listener: ViewListener) { self.listeners.append(listener) }

    package func remove(_ listener: ViewListener) -> Bool {
        guard let i = self.listeners.firstIndex(where: { $0 === listener }) else { return false }
        self.listeners.remove(at: i)
        return true
    }

    private static func order(for node: Node, _ childIndex: ChildIndex?) -> ChildOrder {
        if let childIndex { return .index(childIndex.entries) }
        return .keys(node.childMap)
    }

    private func order(for node: Node) -> ChildOrder { Self.order(for: node, self.childIndex) }

    private func entry(_ key: ChildKey, _ node: Node) -> IndexEntry {
        IndexEntry(sortValue: self.index.sortValue(of: node), key: key)
    }

    // MARK: - Initial events

    /// The events a new registration receives at once: child_added for every child shown, in the
    /// view's order (each with the key before it), or one value event with what is shown.
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
        if let window = self.window { return window.entries.map(\.key.key) }
        let order = self.order(for: node)
        return order.keys(in: 0..<order.count)
    }

    // MARK: - Updates

    /// Moves the view to the new data of its location, appends the events it raises, and queues
    /// a ``ViewChange`` for each listener when what it shows changed.
    /// - Parameter candidates: the only children that can have changed, when the write was below
    ///   this location; then the cost is O(k log *n*) whatever the number of children (or the size
    ///   of the window).
    package func update(location newNode: Node, candidates: [ChildKey]?, into events: inout [Event], changes outbox: inout [ViewChange]) {
        let oldCache = self.cache
        var changes: ChildChanges
        if var window = self.window {
            self.window = nil  // keeps the window's storage uniquely referenced while it changes
            let order = self.order(for: newNode)
            if let candidates {
                changes = window.update(changed: candidates, location: newNode, order: order)
            } else {
                changes = window.rebuild(order: order)
            }
            self.window = window
            if changes.isEmpty { return }
        } else {
            if let candidates {
                changes = ChildChanges(old: oldCache, new: newNode, candidates: candidates)
                if changes.isEmpty { return }
            } else {
                if oldCache == newNode { return }
                changes = ChildChanges(old: oldCache, new: newNode, candidates: nil)
            }
            self.node = newNode
        }
        if !self.listeners.isEmpty {
            var ordered = changes
            if self.window == nil && candidates != nil { ordered.sortByKey() }
            for listener in self.listeners {
                outbox.append(ViewChange(listener: listener, changes: ordered, old: oldCache, new: self.cache))
            }
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

    private func childEvents(_ changes: ChildChanges, location node: Node, into events: inout [Event]) {
        var changes = changes
        let index = self.index
        changes.removed.sort { IndexEntry.compare(self.entry($0.key, $0.node), self.entry($1.key, $1.node)) < 0 }
        changes.added.sort { IndexEntry.compare(self.entry($0.key, $0.node), self.entry($1.key, $1.node)) < 0 }
        changes.changed.sort { IndexEntry.compare(self.entry($0.key, $0.new), self.entry($1.key, $1.new)) < 0 }
        let order = self.window.map { ChildOrder.index($0.entries) } ?? self.order(for: node)
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
