/// A write to apply to the tree: a location and one or more non-overlapping entries below it.
///
/// A `set` is one entry with an empty relative path; a multi-path `update` has one entry per key
/// path; `setPriority` is one `.priority` entry. Entries ending in `.priority` are applied after the
/// others, and only to nodes that exist then (a priority for a node left empty is ignored).
package struct WriteOperation: Sendable {
    package struct Entry: Sendable, Equatable {
        package var path: [ChildKey]
        package var value: WriteValue
        package var isPriority: Bool { self.path.last?.isPriorityKey ?? false }

        package init(path: [ChildKey], value: WriteValue) {
            self.path = path
            self.value = value
        }
    }

    package var path: DatabasePath
    package var entries: [Entry]
    /// Fails the write when the location is empty (`setPriority` on a missing node).
    package var requiresExistingNode: Bool

    package init(path: DatabasePath, entries: [Entry], requiresExistingNode: Bool = false) {
        self.path = path
        self.entries = entries
        self.requiresExistingNode = requiresExistingNode
    }

    /// Replaces the node at `path`.
    package static func set(_ path: DatabasePath, _ value: WriteValue) -> WriteOperation {
        WriteOperation(path: path, entries: [Entry(path: [], value: value)])
    }

    /// Replaces the priority of the (existing) node at `path`.
    package static func setPriority(_ path: DatabasePath, _ priority: ValueConverter.PriorityArgument) -> WriteOperation {
        let value: WriteValue
        switch priority {
        case .none: value = WriteValue(node: .empty)
        case .value(let v): value = WriteValue(node: .leaf(v))
        case .serverValue(let sv): value = WriteValue(node: .leaf(.int(0)), placeholders: [.init(path: [], value: sv, isPriority: false)])
        }
        return WriteOperation(path: path, entries: [Entry(path: [ChildKey(".priority")], value: value)], requiresExistingNode: true)
    }
}
