import CanopyCore
import CanopyWire

/// The actions a reading should give for JSON data, converted as the server converts it (the
/// converter has tests of its own); a conversion that fails gives an action no reading gives.
extension ClientAction {
    private static func unreadable(_ error: DatabaseError) -> ClientAction { .invalid("test", "not convertible: \(error)") }

    static func put(path: DatabasePath, data: JSONValue, hash: String?) -> ClientAction {
        do {
            var converter = try ValueConverter(function: "set", location: path.keys.map(\.string))
            return .put(path: path, value: try converter.convert(data), hash: hash)
        } catch {
            return Self.unreadable(error)
        }
    }

    static func merge(path: DatabasePath, data: [String: JSONValue]) -> ClientAction {
        do { return .merge(path: path, entries: try UpdateEntries.entries(data, location: path.keys, function: "update")) } catch {
            return Self.unreadable(error)
        }
    }

    static func onDisconnectPut(path: DatabasePath, data: JSONValue) -> ClientAction {
        do {
            var converter = try ValueConverter(function: "onDisconnectSetValue", location: path.keys.map(\.string))
            return .onDisconnectPut(path: path, value: try converter.convert(data))
        } catch {
            return Self.unreadable(error)
        }
    }

    static func onDisconnectMerge(path: DatabasePath, data: [String: JSONValue]) -> ClientAction {
        do {
            return .onDisconnectMerge(
                path: path, entries: try UpdateEntries.entries(data, location: path.keys, function: "onDisconnectUpdateChildValues"))
        } catch {
            return Self.unreadable(error)
        }
    }

    static func transactionMerge(path: DatabasePath, data: [String: JSONValue], readHashes: [String: String]) -> ClientAction {
        do {
            return .transactionMerge(
                path: path, entries: try UpdateEntries.entries(data, location: path.keys, function: "transaction"), readHashes: readHashes)
        } catch {
            return Self.unreadable(error)
        }
    }
}
