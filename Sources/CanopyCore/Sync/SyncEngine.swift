/// The database engine: the tree, the views on it, and the events each write raises.
///
/// Pure and single-threaded: it performs no I/O and calls no user code. The library owns one per
/// database on its loop thread, applies writes in order and delivers the returned events in order.
package final class SyncEngine {
    package internal(set) var root: Node
    let viewRoot = ViewTreeNode()
    private var registrationViews: [UInt64: QueryView] = [:]

    package init(root: Node = .empty) {
        self.root = root
    }

    /// The data at `path`. - Complexity: O(*d* log *n*)
    package func node(at path: DatabasePath) -> Node { self.root.node(at: path.keys) }

    /// The number of registrations. For tests and diagnostics.
    package var registrationCount: Int { self.registrationViews.count }

    /// The number of views. For tests and diagnostics.
    package var viewCount: Int { Set(self.registrationViews.values.map(ObjectIdentifier.init)).count }

    // MARK: - Registrations

    /// Registers an observer of `params` at `path`; returns its initial events (spec §6.7).
    package func register(_ registration: EventRegistration, at path: DatabasePath, params: QueryParams) -> [Event] {
        let treeNode = self.viewRoot.descendant(path.keys, create: true)!
        let view: QueryView
        if let existing = treeNode.views.first(where: { $0.params == params }) {
            view = existing
        } else {
            view = QueryView(path: path, params: params, node: self.node(at: path))
            treeNode.views.append(view)
        }
        view.add(registration)
        self.registrationViews[registration.id] = view
        var events: [Event] = []
        view.initialEvents(for: registration, into: &events)
        return events
    }

    /// Removes one registration; its view goes away with its last registration.
    @discardableResult
    package func unregister(_ registration: EventRegistration) -> Bool {
        registration.deactivate()
        guard let view = self.registrationViews.removeValue(forKey: registration.id) else { return false }
        _ = view.remove(registration)
        if view.isUnused, let treeNode = self.viewRoot.descendant(view.path.keys, create: false) {
            treeNode.views.removeAll { $0 === view }
            self.viewRoot.prune(view.path.keys)
        }
        return true
    }

    /// The registrations at exactly `path` (every query there), in registration order.
    package func registrations(at path: DatabasePath) -> [EventRegistration] {
        guard let treeNode = self.viewRoot.descendant(path.keys, create: false) else { return [] }
        return treeNode.views.flatMap(\.registrations)
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
}
