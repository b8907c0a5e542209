import Foundation

/// Walks a Foundation-style value into a `JSONValue`, naming the property path in errors.
struct AnyConverter {
    let prefix: String
    /// The written location's keys, which start every property path in messages.
    var location: [String] = []
    static let maxNesting = 1000

    private func property(_ path: [String]) -> String {
        let all = self.location + path
        return all.isEmpty ? "" : " at /\(all.joined(separator: "/"))"
    }

    mutating func convert(_ value: Any?, path: [String]) throws(DatabaseError) -> JSONValue {
        guard let value else { return .null }
        if path.count > Self.maxNesting {
            throw DatabaseError(
                .invalidValue,
                "\(self.prefix)is nested more than \(Self.maxNesting) levels deep (or contains a cycle)\(self.property(path))")
        }
        // Exact Swift types first, by identity: cheap, and it keeps a boxed `Bool` from being read
        // as an `NSNumber` (and the reverse). Each cast follows its identity check, so it always
        // succeeds; `as?` (the same runtime cast as `as!`, minus the trap) means even a broken
        // invariant falls through instead of trapping. Casting a Swift collection to a Foundation
        // class would bridge (copy) it, so class checks come only for class instances.
        let type = ObjectIdentifier(Swift.type(of: value))
        if type == ObjectIdentifier(String.self), let value = value as? String { return .string(value) }
        if type == ObjectIdentifier(Int.self), let value = value as? Int { return .int(Int64(value)) }
        if type == ObjectIdentifier(Bool.self), let value = value as? Bool { return .bool(value) }
        if type == ObjectIdentifier(Double.self), let value = value as? Double { return try self.double(value, path) }
        if type == ObjectIdentifier(JSONValue.self), let value = value as? JSONValue { return value }
        if type == ObjectIdentifier([String: Any].self), let value = value as? [String: Any] { return try self.object(value, path) }
        if type == ObjectIdentifier([Any].self), let value = value as? [Any] { return try self.array(value, path) }
        if type == ObjectIdentifier(Int64.self), let value = value as? Int64 { return .int(value) }
        if type == ObjectIdentifier(Int32.self), let value = value as? Int32 { return .int(Int64(value)) }
        if type == ObjectIdentifier(Int16.self), let value = value as? Int16 { return .int(Int64(value)) }
        if type == ObjectIdentifier(Int8.self), let value = value as? Int8 { return .int(Int64(value)) }
        if type == ObjectIdentifier(UInt.self), let value = value as? UInt { return Self.unsigned(UInt64(value)) }
        if type == ObjectIdentifier(UInt64.self), let value = value as? UInt64 { return Self.unsigned(value) }
        if type == ObjectIdentifier(UInt32.self), let value = value as? UInt32 { return .int(Int64(value)) }
        if type == ObjectIdentifier(UInt16.self), let value = value as? UInt16 { return .int(Int64(value)) }
        if type == ObjectIdentifier(UInt8.self), let value = value as? UInt8 { return .int(Int64(value)) }
        if type == ObjectIdentifier(Float.self), let value = value as? Float { return try self.double(Double(value), path) }
        if Swift.type(of: value) is AnyObject.Type {
            switch value {
            case is NSNull: return .null
            case let n as NSNumber: return try self.number(n, path)
            case let s as String: return .string(s)
            default: break
            }
        }
        switch value {
        case let v as JSONValue: return v
        case let s as String: return .string(s)
        case let s as Substring: return .string(String(s))
        case let d as Decimal: return try self.double(NSDecimalNumber(decimal: d).doubleValue, path)
        case let dict as [String: Any]: return try self.object(dict, path)
        case let dict as [AnyHashable: Any]:
            var object: [String: JSONValue] = [:]
            object.reserveCapacity(dict.count)
            for (key, member) in dict.sorted(by: { "\($0.key.base)" < "\($1.key.base)" }) {
                guard let key = key.base as? String else {
                    throw DatabaseError(
                        .invalidKey, "\(self.prefix)contains a non-string key (\(key.base))\(self.property(path)). Keys must be strings.")
                }
                object[key] = try self.convert(member, path: path + [key])
            }
            return .object(object)
        case let array as [Any]: return try self.array(array, path)
        case let array as [Any?]:
            var elements: [JSONValue] = []
            for (i, element) in array.enumerated() { elements.append(try self.convert(element, path: path + [String(i)])) }
            return .array(elements)
        case is NSNull: return .null
        case let n as NSNumber: return try self.number(n, path)
        case let optional as any BoxedOptional:
            // An element of `[Any?]` or `[String: Any?]`: `nil` is null, as on iOS.
            return try self.convert(optional.unboxed, path: path)
        default:
            throw DatabaseError(
                .invalidValue,
                "\(self.prefix)contains a value of unsupported type \(Swift.type(of: value))\(self.property(path)). Values must be strings, numbers, booleans, null, arrays or dictionaries."
            )
        }
    }

    private mutating func object(_ dict: [String: Any], _ path: [String]) throws(DatabaseError) -> JSONValue {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(dict.count)
        // Sorted, so that a value with several problems always reports the same one.
        for (key, member) in dict.sorted(by: { $0.key < $1.key }) { object[key] = try self.convert(member, path: path + [key]) }
        return .object(object)
    }

    private mutating func array(_ array: [Any], _ path: [String]) throws(DatabaseError) -> JSONValue {
        var elements: [JSONValue] = []
        elements.reserveCapacity(array.count)
        for (i, element) in array.enumerated() { elements.append(try self.convert(element, path: path + [String(i)])) }
        return .array(elements)
    }

    private static func unsigned(_ u: UInt64) -> JSONValue {
        u <= UInt64(Int64.max) ? .int(Int64(u)) : .double(Double(u))
    }

    private func double(_ d: Double, _ path: [String]) throws(DatabaseError) -> JSONValue {
        if d.isNaN { throw DatabaseError(.invalidValue, "\(self.prefix)contains NaN\(self.property(path))") }
        if !d.isFinite { throw DatabaseError(.invalidValue, "\(self.prefix)contains Infinity\(self.property(path))") }
        return .double(d)
    }

    private func number(_ n: NSNumber, _ path: [String]) throws(DatabaseError) -> JSONValue {
        switch String(cString: n.objCType) {
        case "c", "B": return .bool(n.boolValue)
        case "f", "d": return try self.double(n.doubleValue, path)
        case "Q", "L":
            return Self.unsigned(n.uint64Value)
        default: return .int(n.int64Value)
        }
    }
}

/// An `Optional` boxed in `Any` (an element of `[Any?]` or `[String: Any?]`).
private protocol BoxedOptional { var unboxed: Any? { get } }

extension Optional: BoxedOptional {
    fileprivate var unboxed: Any? { self.map { $0 as Any } }
}
