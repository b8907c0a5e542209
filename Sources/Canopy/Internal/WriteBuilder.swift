import CanopyCore

/// Validates write arguments into ``WriteOperation``s, with Firebase's error messages.
enum WriteBuilder {
    static func checkWritable(_ ref: DatabaseReference, function: String) throws(DatabaseError) {
        if let error = ref.constraintError { throw error }
        if ref.path.isInfo { throw DatabaseError(.invalidPath, "\(function) failed = Can't modify data under /.info/") }
        if ref.core.isClosed { throw DatabaseCore.closedError }
    }

    static func set(_ ref: DatabaseReference, _ value: Any?, function: String = "set") throws(DatabaseError) -> WriteOperation {
        try self.checkWritable(ref, function: function)
        return .set(ref.path, try self.value(value, at: ref.path.keys, function: function, argument: "value"))
    }

    static func set(_ ref: DatabaseReference, _ value: Any?, priority: Any?) throws(DatabaseError) -> WriteOperation {
        let function = "setWithPriority"
        try self.checkWritable(ref, function: function)
        var write = try self.value(value, at: ref.path.keys, function: function, argument: "value")
        switch try ValueConverter.priority(try JSONValue(any: priority, function: function), function: function) {
        case .none: write.node = write.node.withoutPriority
        case .value(let p): write.node = write.node.withPriority(p)
        case .serverValue(let sv):
            if !write.node.isEmpty {
                write.node = write.node.withPriority(.int(0))
                write.placeholders.append(.init(path: [], value: sv, isPriority: true))
            }
        }
        return .set(ref.path, write)
    }

    static func setPriority(_ ref: DatabaseReference, _ priority: Any?) throws(DatabaseError) -> WriteOperation {
        let function = "setPriority"
        try self.checkWritable(ref, function: function)
        let argument = try ValueConverter.priority(try JSONValue(any: priority, function: function), function: function)
        return .setPriority(ref.path, argument)
    }

    static func update(_ ref: DatabaseReference, _ values: [AnyHashable: Any]) throws(DatabaseError) -> WriteOperation {
        let function = "update"
        try self.checkWritable(ref, function: function)
        let prefix = "\(function) failed: values argument "
        var entries: [WriteOperation.Entry] = []
        var paths: [DatabasePath] = []
        for (rawKey, rawValue) in values {
            guard let key = rawKey.base as? String else {
                throw DatabaseError(.invalidKey, "\(prefix)contains a non-string key (\(rawKey.base)). Keys must be strings.")
            }
            let segments = key.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(Substring($0)) }
            for (i, segment) in segments.enumerated() {
                let isLastPriority = i == segments.count - 1 && segment == ".priority"
                guard KeyValidation.isValidKey(segment) || isLastPriority else {
                    throw DatabaseError(.invalidKey, "\(prefix)contains an invalid key (\(segment)) in path /\(segments.joined(separator: "/")). Keys must be non-empty strings and can't contain \".\", \"#\", \"$\", \"/\", \"[\", or \"]\"")
                }
            }
            let relative = segments.map { ChildKey($0) }
            let json = try JSONValue(any: rawValue, function: function)
            let write: WriteValue
            if segments.last == ".priority" {
                let full = "/" + (ref.path.keys.map(\.string) + segments).joined(separator: "/")
                let invalid = DatabaseError(.invalidPriority, "\(prefix)contains an invalid value for '\(full)', which must be a valid Firebase priority (a string, finite number, server value, or null).")
                let argument: ValueConverter.PriorityArgument
                do { argument = try ValueConverter.priority(json, function: function) } catch { throw invalid }
                switch argument {
                case .none: write = WriteValue(node: .empty)
                case .value(let p): write = WriteValue(node: .leaf(p))
                case .serverValue(let sv): write = WriteValue(node: .leaf(.int(0)), placeholders: [.init(path: [], value: sv, isPriority: false)])
                }
            } else {
                write = try self.value(json, at: ref.path.keys + relative, function: function, argument: "values")
            }
            entries.append(WriteOperation.Entry(path: relative, value: write))
            paths.append(DatabasePath(relative))
        }
        if Self.hasOverlap(paths) {
            // Report the first overlapping pair in path order, as Firebase does.
            paths.sort()
            for i in paths.indices.dropFirst() where paths[i - 1].contains(paths[i]) {
                throw DatabaseError(.invalidPath, "\(prefix)contains a path \(paths[i - 1].string) that is ancestor of another path \(paths[i].string)")
            }
        }
        return WriteOperation(path: ref.path, entries: entries)
    }

    /// Whether one path equals or contains another. - Complexity: O(*n* · *d*)
    static func hasOverlap(_ paths: [DatabasePath]) -> Bool {
        var seen = Set<ArraySlice<ChildKey>>(minimumCapacity: paths.count)
        for path in paths where !seen.insert(path.keys[...]).inserted { return true }
        for path in paths {
            for length in 0..<path.keys.count where seen.contains(path.keys[..<length]) { return true }
        }
        return false
    }

    static func value(_ value: Any?, at location: [ChildKey], function: String, argument: String) throws(DatabaseError) -> WriteValue {
        let json = try JSONValue(any: value, function: function)
        var converter = try ValueConverter(function: function, argument: argument, location: location.map(\.string))
        return try converter.convert(json)
    }
}
