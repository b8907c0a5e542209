import CanopyCore

/// A location in the database, to read, write and observe (Firebase's `DatabaseReference`).
///
/// References are cheap immutable values; create as many as you like. Navigation never throws:
/// `child("a.b")` returns a reference that reports the invalid path to every operation on it.
public final class DatabaseReference: DatabaseQuery, @unchecked Sendable {
    init(database: Database, path: DatabasePath, error: DatabaseError?) {
        super.init(database: database, path: path, builder: QueryBuilder(), error: error)
    }

    /// The last key of the path, `nil` at the root.
    public var key: String? { self.path.last?.string }

    /// The parent location, `nil` at the root.
    ///
    /// - Complexity: O(*d*) at depth *d* (the path is copied).
    public var parent: DatabaseReference? {
        guard let parent = self.path.parent else { return nil }
        return DatabaseReference(database: self.database, path: parent, error: self.constraintError)
    }

    /// The root of the database.
    public var root: DatabaseReference { self.database.reference() }

    /// The location at `pathString` below this one (`"a/b"` is two levels; slashes collapse).
    ///
    /// - Complexity: O(*d* + *m*) for a path string of *m* keys below a location at depth *d*: the keys are
    ///   validated and the path copied.
    public func child(_ pathString: String) -> DatabaseReference {
        if let error = self.constraintError { return DatabaseReference(database: self.database, path: self.path, error: error) }
        if pathString.isEmpty {
            return DatabaseReference(database: self.database, path: self.path, error: Self.invalidChildPath(pathString))
        }
        // One key (the common case): nothing to split. (A valid key has no `/` and is not `.info`.)
        if let key = ChildKey(validating: pathString) {
            return DatabaseReference(database: self.database, path: self.path.appending(key), error: nil)
        }
        do throws(DatabaseError) {
            var relative = try DatabasePath(validating: pathString, function: "child", argument: "path")
            if !self.path.isRoot && relative.isInfo {
                throw Self.invalidChildPath(pathString)
            }
            relative = DatabasePath(relative.keys)
            return DatabaseReference(database: self.database, path: self.path.appending(relative), error: nil)
        } catch {
            return DatabaseReference(database: self.database, path: self.path, error: error)
        }
    }

    /// Like ``child(_:)`` but throws a `DatabaseError` for an invalid path.
    ///
    /// - Complexity: As ``child(_:)``: O(*d* + *m*).
    public func validatedChild(_ pathString: String) throws(DatabaseError) -> DatabaseReference {
        let child = self.child(pathString)
        if let error = child.constraintError { throw error }
        return child
    }

    /// A new child location with a unique, chronologically ordered push ID as its key. Nothing is
    /// written until you write to it.
    ///
    /// - Complexity: O(*d*) at depth *d* (the path is copied); the push ID is O(1).
    public func childByAutoId() -> DatabaseReference {
        let key = PushIDGenerator.shared.next(now: self.core.clock())
        return DatabaseReference(database: self.database, path: self.path.appending(ChildKey(key)), error: self.constraintError)
    }

    /// The location as a path string (`/users/ada`), `/` for the root.
    ///
    /// - Complexity: O(*L*) for a path of *L* bytes.
    public var pathString: String { self.path.string }

    /// A URL for the location: `canopy:///users/ada`.
    ///
    /// - Complexity: O(*d* · *L*) for a path of *d* keys and *L* bytes: the string is rebuilt for each key.
    public var url: String { "canopy://" + self.path.keys.map { Self.percentEncode($0.string) }.reduce("") { $0 + "/" + $1 } }

    private static func invalidChildPath(_ string: String) -> DatabaseError {
        DatabaseError(
            .invalidPath,
            "child failed: path argument was an invalid path = \"\(string)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
        )
    }

    private static func percentEncode(_ s: String) -> String {
        var out = ""
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension DatabaseReference: CustomStringConvertible {
    /// - Complexity: As ``url``: O(*d* · *L*) for a path of *d* keys and *L* bytes.
    public var description: String { self.url }
}

extension DatabaseReference: Equatable {
    /// References are equal when they are the same location of the same database.
    ///
    /// - Complexity: O(*d*): the paths are compared key by key.
    public static func == (lhs: DatabaseReference, rhs: DatabaseReference) -> Bool {
        lhs.database === rhs.database && lhs.path == rhs.path
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - self.count)) + self
    }
}
