/// The keys of a multi-path update (`updateChildValues`, `canopy update`, a REST `PATCH`), with
/// one set of rules and messages for every entry point: each key is a relative path
/// whose segments are valid keys (the last may be `.priority`), not empty, and no path may contain
/// another.
package enum UpdateEntries {
    /// The segments of update key `key`.
    package static func relativePath(_ key: String, function: String) throws(DatabaseError) -> [ChildKey] {
        let segments = key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(Substring($0)) }
        if segments.isEmpty {
            // Not the location itself: an empty key is a mistake, and it would replace everything here.
            throw DatabaseError(
                .invalidKey, "\(function) failed: values argument contains an empty path (\"\(key)\"). Keys name children of the location.")
        }
        for (i, segment) in segments.enumerated() {
            let isLastPriority = i == segments.count - 1 && segment == ".priority"
            guard KeyValidation.isValidKey(segment) || isLastPriority else {
                throw DatabaseError(
                    .invalidKey,
                    "\(function) failed: values argument contains an invalid key (\(segment)) in path /\(segments.joined(separator: "/")). Keys must be non-empty strings and can't contain \".\", \"#\", \"$\", \"/\", \"[\", or \"]\""
                )
            }
        }
        return segments.map { ChildKey($0) }
    }

    /// The error for the first pair of `paths` (in path order) where one contains the other.
    package static func overlap(_ paths: [DatabasePath], function: String) -> DatabaseError? {
        let sorted = paths.sorted()
        for i in sorted.indices.dropFirst() where sorted[i - 1].contains(sorted[i]) {
            return DatabaseError(
                .invalidPath,
                "\(function) failed: values argument contains a path \(sorted[i - 1].string) that is ancestor of another path \(sorted[i].string)"
            )
        }
        return nil
    }

    /// The entries of a JSON update object written at `location`.
    package static func entries(_ members: [String: JSONValue], location: [ChildKey], function: String) throws(DatabaseError)
        -> [WriteOperation.Entry]
    {
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(members.count)
        // Sorted, so that a body with several problems always reports the same one.
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            let relative = try self.relativePath(key, function: function)
            let write: WriteValue
            if relative.last?.string == ".priority" {
                let full = "/" + (location + relative).map(\.string).joined(separator: "/")
                write = try ValueConverter.priorityEntry(at: full, function: function) { value }
            } else {
                write = try ValueConverter.writeValue(value, at: location + relative, function: function, argument: "values")
            }
            entries.append(WriteOperation.Entry(path: relative, value: write))
        }
        // Keys without a slash are distinct single keys, which cannot overlap.
        if members.keys.contains(where: { $0.utf8.contains(UInt8(ascii: "/")) }),
            let error = self.overlap(entries.map { DatabasePath($0.path) }, function: function)
        {
            throw error
        }
        return entries
    }
}

extension ValueConverter {
    /// The write of an update's `.priority` entry at `full` (the path errors name): the priority
    /// `json()` gives, as a leaf (nothing for `null`, a placeholder for a server value).
    /// - Throws: ``DatabaseError`` `.invalidPriority` when `json()` throws or gives no valid priority.
    package static func priorityEntry(at full: String, function: String, _ json: () throws -> JSONValue) throws(DatabaseError)
        -> WriteValue
    {
        let argument: PriorityArgument
        do {
            argument = try Self.priority(try json(), function: function)
        } catch {
            throw DatabaseError(
                .invalidPriority,
                "\(function) failed: values argument contains an invalid value for '\(full)', which must be a valid Firebase priority (a string, finite number, server value, or null)."
            )
        }
        switch argument {
        case .none: return WriteValue(node: .empty)
        case .value(let p): return WriteValue(node: .leaf(p))
        case .serverValue(let sv): return WriteValue(node: .leaf(.int(0)), placeholders: [.init(path: [], value: sv, isPriority: false)])
        }
    }
}
