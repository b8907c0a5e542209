/// A subscriber to one view (a location and its query) that is told, after each write, how what
/// the view shows changed: the children that entered, left or changed, and the data shown before
/// and after. It is how Canopy's own server follows a query without recomputing it: a server-sent
/// event stream on a query today, a WebSocket protocol's tagged listen next.
///
/// Registered with ``SyncEngine/listen(_:)`` and removed with ``SyncEngine/unlisten(_:)``, on the
/// loop thread. The engine never calls `onChange` itself (it runs no outside code): it queues a
/// ``ViewChange`` per listener for each write that changes the view, and whoever applied the write
/// takes them with ``SyncEngine/takeViewChanges()`` and calls them, in order.
package final class ViewListener {
    package let path: DatabasePath
    package let params: QueryParams
    package let onChange: (ViewChange) -> Void

    package init(path: DatabasePath, params: QueryParams, onChange: @escaping (ViewChange) -> Void) {
        self.path = path
        self.params = params
        self.onChange = onChange
    }
}

/// How one write changed what a view shows, for one ``ViewListener``.
package struct ViewChange {
    package let listener: ViewListener
    /// The children that left, entered or changed in the view; each list in key order.
    package let changes: ChildChanges
    /// What the view showed before the write: the location's data, or a filtered query's window.
    package let old: Node
    /// What the view shows after it.
    package let new: Node

    /// Calls the listener.
    package func deliver() { self.listener.onChange(self) }
}
