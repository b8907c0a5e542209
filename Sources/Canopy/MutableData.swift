import CanopyCore
public import Foundation

/// The data a transaction block reads and changes (Firebase's `MutableData`).
///
/// A `MutableData` is a view of one location inside the transaction's working copy: children
/// obtained with ``childData(byAppendingPath:)`` write through to it. Use it only inside the
/// transaction block, on the thread that calls the block.
public final class MutableData {
    package let store: Store
    let relativePath: [ChildKey]

    /// The working copy of a transaction.
    package final class Store {
        package var node: Node
        let location: DatabasePath
        let now: Int64
        /// The first invalid value set, reported to the transaction's completion.
        package var error: DatabaseError?

        package init(node: Node, location: DatabasePath, now: Int64) {
            self.node = node
            self.location = location
            self.now = now
        }
    }

    package init(store: Store, path: [ChildKey]) {
        self.store = store
        self.relativePath = path
    }

    var node: Node { self.store.node.node(at: self.relativePath) }

    /// The data here as Foundation values (as ``DataSnapshot/value``); `NSNull` when empty. Setting
    /// it replaces the data and clears its priority; `nil` removes it. An invalid value leaves the
    /// data unchanged and fails the transaction with the validation error.
    ///
    /// - Complexity: Reading, O(*s*) for *s* nodes; setting, O(*s* + *m* log *n*) for a value of *s* nodes
    ///   *m* levels below the transaction's location (validated, then set in the working copy).
    public var value: Any? {
        get { self.node.plainJSON.anyValue }
        set {
            do {
                let json = try JSONValue(any: newValue, function: "transaction")
                var converter = try ValueConverter(
                    function: "transaction", argument: "value", location: (self.store.location.keys + self.relativePath).map(\.string))
                let write = try converter.convert(json)
                let resolved = write.resolved(against: self.node, now: self.store.now)
                self.store.node.set(resolved, at: self.relativePath[...])
            } catch {
                if self.store.error == nil { self.store.error = error }
            }
        }
    }

    /// The data here as a `JSONValue`.
    ///
    /// - Complexity: As ``value``: O(*s*) to read; O(*s* + *m* log *n*) to set a value of *s* nodes *m*
    ///   levels below the transaction's location.
    public var json: JSONValue {
        get { self.node.plainJSON }
        set { self.value = newValue }
    }

    /// The priority: a `String` or `NSNumber`, `NSNull` when none. Setting it on empty data does
    /// nothing.
    ///
    /// - Complexity: O(*m* log *n*) for data *m* levels below the transaction's location (O(1) at it).
    public var priority: Any? {
        get { self.node.priority.map { $0.jsonValue.anyValue } ?? NSNull() }
        set {
            do {
                let argument = try ValueConverter.priority(try JSONValue(any: newValue, function: "transaction"), function: "transaction")
                let current = self.node
                guard !current.isEmpty else { return }
                switch argument {
                case .none: self.store.node.set(current.withoutPriority, at: self.relativePath[...])
                case .value(let p): self.store.node.set(current.withPriority(p), at: self.relativePath[...])
                case .serverValue(let sv):
                    self.store.node.set(
                        current.withPriority(sv.resolve(current: current.priority, now: self.store.now)), at: self.relativePath[...])
                }
            } catch {
                if self.store.error == nil { self.store.error = error }
            }
        }
    }

    /// The number of direct children.
    ///
    /// - Complexity: O(*m* log *n*) for data *m* levels below the transaction's location (O(1) at it).
    public var childrenCount: UInt { UInt(self.node.childCount) }

    /// Whether there is at least one child.
    ///
    /// - Complexity: O(*m* log *n*) for data *m* levels below the transaction's location (O(1) at it).
    public func hasChildren() -> Bool { self.node.hasChildren }

    /// Whether there is data at the relative path.
    ///
    /// - Complexity: O((*m* + *p*) log *n*) for a relative path of *p* keys, *m* levels below the
    ///   transaction's location.
    public func hasChild(atPath path: String) -> Bool {
        guard let relative = try? DatabasePath(validating: path, function: "hasChild(atPath:)") else { return false }
        return !self.node.node(at: relative.keys).isEmpty
    }

    /// The data at a relative path below this one, existing or not; writes go through to this data.
    ///
    /// - Complexity: O(*m* + *p*) for a relative path of *p* keys, *m* levels below the transaction's
    ///   location.
    public func childData(byAppendingPath path: String) -> MutableData {
        guard let relative = try? DatabasePath(validating: path, function: "childData(byAppendingPath:)") else {
            if self.store.error == nil {
                self.store.error = DatabaseError(
                    .invalidPath,
                    "childData(byAppendingPath:) failed: path argument was an invalid path = \"\(path)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
                )
            }
            return MutableData(store: self.store, path: self.relativePath)
        }
        return MutableData(store: self.store, path: self.relativePath + relative.keys)
    }

    /// The direct children as they are now, in priority-then-key order (later additions are not
    /// visited).
    ///
    /// - Complexity: O(*n* · *m*) for *n* children *m* levels below the transaction's location (each child's
    ///   path is built), plus O(*n* log *n*) to sort them when some child has a priority.
    public var children: NSEnumerator {
        var ordered = OrderedChildren(node: self.node, index: .priority)
        return MutableDataEnumerator(ordered.all().map { MutableData(store: self.store, path: self.relativePath + [$0.key]) })
    }

    /// The last key of this data's path; `nil` for the transaction's own location's data at the root.
    public var key: String? {
        if let last = self.relativePath.last { return last.string }
        return self.store.location.last?.string
    }
}

final class MutableDataEnumerator: NSEnumerator {
    private var remaining: IndexingIterator<[MutableData]>
    init(_ items: [MutableData]) { self.remaining = items.makeIterator() }
    override func nextObject() -> Any? { self.remaining.next() }
}
