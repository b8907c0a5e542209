import CanopyCore
public import Foundation

/// The data at a location at one moment (Firebase's `DataSnapshot`): an immutable value that
/// later writes never change. Cheap to keep: it shares storage with the database.
public struct DataSnapshot: Sendable {
    let node: Node
    /// The location is `base` followed by `childKey` when there is one: a child snapshot builds
    /// its path only when asked for it (reading a child's value never does).
    private let base: DatabasePath
    private let childKey: ChildKey?
    let index: QueryIndex
    let database: Database
    /// Whether the data includes unconfirmed writes or came from a cache (see ``SnapshotMetadata``).
    /// A child snapshot (``childSnapshot(forPath:)``, ``children``) carries its parent's.
    public let metadata: SnapshotMetadata

    package init(node: Node, path: DatabasePath, index: QueryIndex = .priority, database: Database, metadata: SnapshotMetadata = .settled) {
        self.node = node
        self.base = path
        self.childKey = nil
        self.index = index
        self.database = database
        self.metadata = metadata
    }

    /// The snapshot of `node` at `key` below `parent` (the parent's metadata, default order).
    private init(node: Node, parent: DatabasePath, key: ChildKey, database: Database, metadata: SnapshotMetadata) {
        self.node = node
        self.base = parent
        self.childKey = key
        self.index = .priority
        self.database = database
        self.metadata = metadata
    }

    /// The location.
    ///
    /// - Complexity: O(*d*) at depth *d* for a child snapshot (its path is built), else O(1).
    var path: DatabasePath { self.childKey.map { self.base.appending($0) } ?? self.base }

    /// The data as Foundation values: `NSNull` when there is none, else `Bool`, `NSNumber`
    /// (integers keep `Int64` precision), `String`, `[String: Any]`, or `[Any]` for children keyed
    /// `0…n` with most indices present (holes are `NSNull`). Priorities are not included.
    ///
    /// ```swift
    /// let post = snapshot.value as? [String: Any]
    /// let stars = post?["starCount"] as? Int ?? 0
    /// ```
    ///
    /// - Complexity: O(*s*) for *s* nodes: the whole tree is converted.
    public var value: Any? { self.node.plainJSON.anyValue }

    /// The data as a `JSONValue` (arrays as in ``value``; no priorities).
    ///
    /// - Complexity: O(*s*) for *s* nodes.
    public var json: JSONValue { self.node.plainJSON }

    /// The data with priorities: `.priority` keys, and `{".value": v, ".priority": p}` for leaves
    /// with a priority; never arrays.
    ///
    /// - Complexity: O(*s*) for *s* nodes.
    public func valueInExportFormat() -> Any? { self.node.exportJSON.anyValue }

    /// ``valueInExportFormat()`` as a `JSONValue`.
    ///
    /// - Complexity: O(*s*) for *s* nodes.
    public var exportJSON: JSONValue { self.node.exportJSON }

    /// Whether there is data here (a priority alone is not data).
    public func exists() -> Bool { !self.node.isEmpty }

    /// The last key of the location, `nil` for the root.
    public var key: String? { (self.childKey ?? self.base.last)?.string }

    /// A reference to this snapshot's location.
    public var ref: DatabaseReference { DatabaseReference(database: self.database, path: self.path, error: nil) }

    /// The priority: a `String` or `NSNumber`, or `NSNull` when there is none.
    public var priority: Any? { self.node.priority.map { $0.jsonValue.anyValue } ?? NSNull() }

    /// The number of direct children (0 for leaves and missing data).
    public var childrenCount: UInt { UInt(self.node.childCount) }

    /// Whether there is at least one child.
    public func hasChildren() -> Bool { self.node.hasChildren }

    /// Whether there is data at the relative path (`"a/b"` allowed).
    ///
    /// - Complexity: O(*m* log *n*) for a relative path of *m* keys.
    public func hasChild(_ childPathString: String) -> Bool {
        guard let relative = try? DatabasePath(validating: childPathString, function: "hasChild"), !childPathString.isEmpty else {
            return false
        }
        return !self.node.node(at: relative.keys).isEmpty
    }

    /// The snapshot at a relative path; an empty snapshot (with that key) when there is no data.
    /// An invalid path gives an empty snapshot of this location's ``childSnapshot(forPath:)``
    /// counterpart; use ``validatedChildSnapshot(forPath:)`` to get the error instead.
    ///
    /// - Complexity: O(*d* + *m* log *n*) for a relative path of *m* keys below a location at depth *d*.
    public func childSnapshot(forPath childPathString: String) -> DataSnapshot {
        (try? self.validatedChildSnapshot(forPath: childPathString))
            ?? DataSnapshot(node: .empty, path: self.path, database: self.database, metadata: self.metadata)
    }

    /// Like ``childSnapshot(forPath:)`` but throws a `DatabaseError` for an invalid path.
    ///
    /// - Complexity: O(*d* + *m* log *n*) for a relative path of *m* keys below a location at depth *d*.
    public func validatedChildSnapshot(forPath childPathString: String) throws(DatabaseError) -> DataSnapshot {
        if childPathString.isEmpty {
            throw DatabaseError(
                .invalidPath,
                "childSnapshot(forPath:) failed: path argument was an invalid path = \"\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
            )
        }
        // One key (the common case): no path to split. (A valid key has no `/`.)
        if let key = ChildKey(validating: childPathString) {
            return DataSnapshot(node: self.node.child(key), parent: self.path, key: key, database: self.database, metadata: self.metadata)
        }
        let relative = try DatabasePath(validating: childPathString, function: "childSnapshot(forPath:)")
        return DataSnapshot(
            node: self.node.node(at: relative.keys), path: self.path.appending(relative), database: self.database, metadata: self.metadata)
    }

    /// The direct children in this snapshot's order (the query's order for a query's `value`,
    /// else priority then key), as an enumerator of `DataSnapshot` like Firebase's.
    ///
    /// ```swift
    /// for child in snapshot.children {
    ///     guard let snap = child as? DataSnapshot else { continue }
    ///     print(snap.key ?? "")
    /// }
    /// ```
    ///
    /// - Complexity: As ``childSnapshots``: O(*n* + *d*) for *n* children at depth *d*, plus O(*n* log *n*)
    ///   to sort them in an order other than key order.
    public var children: NSEnumerator { SnapshotEnumerator(self.childSnapshots) }

    /// The direct children in this snapshot's order, typed.
    ///
    /// - Complexity: O(*n*) for *n* children (each child snapshot shares storage; its path is built
    ///   only when asked for), plus O(*d*) at depth *d* for this snapshot's path. An order other than key
    ///   order (priority order is key order when no child has a priority) adds O(*n* log *n*) to sort them.
    public var childSnapshots: [DataSnapshot] {
        var ordered = OrderedChildren(node: self.node, index: self.index)
        let path = self.path
        return ordered.all().map {
            DataSnapshot(node: $0.node, parent: path, key: $0.key, database: self.database, metadata: self.metadata)
        }
    }
}

extension DataSnapshot: CustomStringConvertible {
    /// - Complexity: O(*s*) for *s* nodes.
    public var description: String {
        "Snap (\(self.key ?? "/")) \(self.node.exportJSON.jsonString())"
    }
}

/// Firebase's `children` enumerator over snapshots.
final class SnapshotEnumerator: NSEnumerator {
    private var remaining: IndexingIterator<[DataSnapshot]>
    init(_ snapshots: [DataSnapshot]) { self.remaining = snapshots.makeIterator() }
    override func nextObject() -> Any? { self.remaining.next() }
}
