/// An event to deliver: who gets it, what kind, and the snapshot data.
package struct Event: Sendable {
    package let registration: EventRegistration
    package let type: EventType
    /// Where the snapshot is: the view's location for `value`, the child's location otherwise.
    package let path: DatabasePath
    /// The snapshot's data: the view's window for `value`, the child node otherwise.
    package let node: Node
    /// The order the snapshot's children iterate in (the view's index for `value` snapshots).
    package let index: QueryIndex
    /// The key of the preceding child in the view (child_added, child_changed, child_moved).
    package let previousKey: String?

    package init(registration: EventRegistration, type: EventType, path: DatabasePath, node: Node, index: QueryIndex, previousKey: String?)
    {
        self.registration = registration
        self.type = type
        self.path = path
        self.node = node
        self.index = index
        self.previousKey = previousKey
    }
}
