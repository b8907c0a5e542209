import CanopyCore
import Foundation

/// Validates write arguments into ``WriteOperation``s, with Firebase's error messages.
enum WriteBuilder {
    static func checkWritable(_ ref: DatabaseReference, function: String) throws(DatabaseError) {
        if let error = ref.constraintError { throw error }
        try ref.path.checkWritable(function: function)
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
        switch try ValueConverter.priority(try self.priorityJSON(priority, function: function), function: function) {
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
        let argument = try ValueConverter.priority(try self.priorityJSON(priority, function: function), function: function)
        return .setPriority(ref.path, argument)
    }

    static func update(_ ref: DatabaseReference, _ values: [AnyHashable: Any]) throws(DatabaseError) -> WriteOperation {
        try self.update(ref, values, large: { BatchConverter.entries(values, at: $0) }) { rawKey throws(DatabaseError) in
            guard let key = FastAnyConverter.string(rawKey) ?? (rawKey.base as? String) else {
                throw DatabaseError(
                    .invalidKey, "update failed: values argument contains a non-string key (\(rawKey.base)). Keys must be strings.")
            }
            return key
        }
    }

    /// The update of a dictionary with string keys, without bridging it to `AnyHashable` keys
    /// (only for thousands of entries, which are converted on several threads).
    static func update(_ ref: DatabaseReference, _ values: [String: Any]) throws(DatabaseError) -> WriteOperation {
        try self.update(
            ref, values,
            large: { BatchConverter.entries(Dictionary(uniqueKeysWithValues: values.lazy.map { (AnyHashable($0.key), $0.value) }), at: $0) }
        ) { $0 }
    }

    private static func update<Key: Hashable>(
        _ ref: DatabaseReference, _ values: [Key: Any], large: (PathBudget) -> [WriteOperation.Entry]?,
        key string: (Key) throws(DatabaseError) -> String
    ) throws(DatabaseError) -> WriteOperation {
        let function = "update"
        try self.checkWritable(ref, function: function)
        let base = PathBudget(location: ref.path.keys)
        if values.count >= BatchConverter.threshold, let entries = large(base) {
            return WriteOperation(path: ref.path, entries: entries)
        }
        var entries: [WriteOperation.Entry] = []
        entries.reserveCapacity(values.count)
        // Keys that are single valid keys cannot overlap (the keys of a dictionary differ); any
        // other key (with `/`, or `.priority`) needs the full check.
        var needsOverlapCheck = false
        for (rawKey, rawValue) in values {
            let key = try string(rawKey)
            if let childKey = ChildKey(validating: key), base.fits, let node = BatchConverter.node(rawValue, location: base, key: key) {
                entries.append(WriteOperation.Entry(path: [childKey], value: WriteValue(node: node)))
            } else {
                let entry = try self.updateEntry(ref, key: key, value: rawValue, function: function)
                needsOverlapCheck = needsOverlapCheck || entry.path.count != 1 || key.utf8.contains(UInt8(ascii: "/"))
                entries.append(entry)
            }
        }
        if needsOverlapCheck {
            let paths = entries.map { DatabasePath($0.path) }
            // Report the first overlapping pair in path order, as Firebase does.
            if Self.hasOverlap(paths), let error = UpdateEntries.overlap(paths, function: function) { throw error }
        }
        return WriteOperation(path: ref.path, entries: entries)
    }

    /// One entry of an update, by the exact rules: the key as a relative path (`a/b`, or ending in
    /// `.priority`), the value converted with messages naming the problem.
    private static func updateEntry(_ ref: DatabaseReference, key: String, value rawValue: Any, function: String) throws(DatabaseError)
        -> WriteOperation.Entry
    {
        let relative = try UpdateEntries.relativePath(key, function: function)
        let segments = relative.map(\.string)
        let write: WriteValue
        if segments.last == ".priority" {
            let full = "/" + (ref.path.keys.map(\.string) + segments).joined(separator: "/")
            write = try ValueConverter.priorityEntry(at: full, function: function) { try self.priorityJSON(rawValue, function: function) }
        } else {
            let location = (ref.path.keys + relative).map(\.string)
            let json = try JSONValue(any: rawValue, function: function, argument: "values", location: location)
            var converter = try ValueConverter(function: function, argument: "values", location: location)
            write = try converter.convert(json)
        }
        return WriteOperation.Entry(path: relative, value: write)
    }

    /// Whether one path equals or contains another.
    ///
    /// - Complexity: O(*n* · *d*)
    static func hasOverlap(_ paths: [DatabasePath]) -> Bool {
        var seen = Set<ArraySlice<ChildKey>>(minimumCapacity: paths.count)
        for path in paths where !seen.insert(path.keys[...]).inserted { return true }
        for path in paths {
            for length in 0..<path.keys.count where seen.contains(path.keys[..<length]) { return true }
        }
        return false
    }

    static func value(_ value: Any?, at location: [ChildKey], function: String, argument: String) throws(DatabaseError) -> WriteValue {
        // One pass for plain values; the exact path below for the rest (and to name a problem).
        let budget = PathBudget(location: location)
        if budget.fits {
            var converter = FastAnyConverter(budget: budget)
            if let node = try? converter.node(value) { return WriteValue(node: node) }
        }
        let names = location.map(\.string)
        let json = try JSONValue(any: value, function: function, argument: argument, location: names)
        var converter = try ValueConverter(function: function, argument: argument, location: names)
        return try converter.convert(json)
    }

    /// A priority argument as JSON. Values the Foundation conversion rejects are invalid
    /// priorities; NaN keeps its own message, which `ValueConverter.priority` gives.
    static func priorityJSON(_ priority: Any?, function: String) throws(DatabaseError) -> JSONValue {
        do {
            return try JSONValue(any: priority, function: function)
        } catch {
            if let d = priority as? Double, d.isNaN { return .double(.nan) }
            if let f = priority as? Float, f.isNaN { return .double(.nan) }
            if let n = priority as? NSNumber, n.doubleValue.isNaN { return .double(.nan) }
            return .array([])  // rejected by `ValueConverter.priority` with the Firebase message
        }
    }
}
