/// A location in the tree: a sequence of keys from the root.
///
/// Parsing splits on `/` and drops empty segments, so `"/a//b/"` is `a/b` and `""`, `"/"` are the
/// root. Segments must be valid keys (see *Ordering and Keys*); `.info` is allowed only as the
/// first segment.
package struct DatabasePath: Sendable, Hashable {
    package var keys: [ChildKey]

    package init(_ keys: [ChildKey] = []) { self.keys = keys }

    package static let root = DatabasePath()

    /// Parses and validates a path string; `function` names the API in the error message.
    package init(validating string: String, function: String, argument: String = "path") throws(DatabaseError) {
        var string = string
        // One pass over the bytes: split on `/` (never inside a multi-byte scalar, and a `/`
        // followed by a combining mark is still a separator), validate each segment and parse its
        // integer value together.
        let keys = string.withUTF8 { bytes -> [ChildKey]? in
            var keys: [ChildKey] = []
            var start = 0
            var i = 0
            let n = bytes.count
            while i <= n {
                if i == n || bytes[i] == UInt8(ascii: "/") {
                    if i > start {
                        let segment = UnsafeBufferPointer(rebasing: bytes[start..<i])
                        let key = String(decoding: segment, as: UTF8.self)
                        if let order = ChildKey.validatedOrder(segment) {
                            keys.append(ChildKey(string: key, order: order))
                        } else if keys.isEmpty && key == ".info" {
                            keys.append(ChildKey(key))
                        } else {
                            return nil
                        }
                    }
                    start = i + 1
                }
                i += 1
            }
            return keys
        }
        guard let keys else {
            throw DatabaseError(
                .invalidPath,
                "\(function) failed: \(argument) argument was an invalid path = \"\(string)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
            )
        }
        self.keys = keys
    }

    package var isRoot: Bool { self.keys.isEmpty }
    package var count: Int { self.keys.count }
    package var last: ChildKey? { self.keys.last }

    package var parent: DatabasePath? {
        guard !self.keys.isEmpty else { return nil }
        return DatabasePath(Array(self.keys.dropLast()))
    }

    package func appending(_ other: DatabasePath) -> DatabasePath { DatabasePath(self.keys + other.keys) }
    package func appending(_ key: ChildKey) -> DatabasePath {
        var keys: [ChildKey] = []
        keys.reserveCapacity(self.keys.count + 1)
        keys.append(contentsOf: self.keys)
        keys.append(key)
        return DatabasePath(keys)
    }

    /// Whether `self` is `other` or one of its ancestors.
    package func contains(_ other: DatabasePath) -> Bool {
        guard self.keys.count <= other.keys.count else { return false }
        for i in 0..<self.keys.count where self.keys[i] != other.keys[i] { return false }
        return true
    }

    /// The path of `other` relative to `self`, when `self` contains it.
    package func relative(to ancestor: DatabasePath) -> ArraySlice<ChildKey>? {
        guard ancestor.contains(self) else { return nil }
        return self.keys[ancestor.keys.count...]
    }

    /// Whether the path is under the reserved `.info` tree.
    package var isInfo: Bool { self.keys.first?.string == ".info" }

    /// Refuses a write here when the path is under `/.info/`, which no client writes (the
    /// embedded API, REST and the SDKs' protocol refuse it with this one message; `function`, when
    /// given, prefixes it as Firebase's SDKs do: "set failed = …").
    package func checkWritable(function: String? = nil) throws(DatabaseError) {
        guard self.isInfo else { return }
        throw DatabaseError(.invalidPath, (function.map { "\($0) failed = " } ?? "") + "Can't modify data under /.info/")
    }

    /// `/a/b`, or `/` for the root.
    package var string: String { self.keys.isEmpty ? "/" : "/" + self.keys.map(\.string).joined(separator: "/") }
}

extension DatabasePath: Comparable {
    /// Path order: segment by segment in key order, a proper prefix first.
    package static func < (lhs: DatabasePath, rhs: DatabasePath) -> Bool {
        for (a, b) in zip(lhs.keys, rhs.keys) {
            let c = ChildKey.compare(a, b)
            if c != 0 { return c < 0 }
        }
        return lhs.keys.count < rhs.keys.count
    }
}

extension DatabasePath: CustomStringConvertible {
    package var description: String { self.string }
}
