import CanopyCluster
import CanopyCore
import CanopyRules
import Foundation
import NIOCore

/// What a follower sends its leader's `POST /.cluster/write` and what it gets back: JSON, with
/// writes and data framed as log records (base64), so that one codec carries them everywhere.
///
/// ```
/// {"node": 3, "requests": [{"w": "<record>", "i": {"auth": {...}, "exp": 1700000000000},
///   "c": {"hash": "..."}, "r": [["/a", "hash"]], "n": true, "reg": 12, "session": "s1"}]}
/// {"committed": 42, "outcomes": [{"seq": 42, "node": "<record>"}, {"denied": true}, {"stale": true},
///   {"changed": "etag", "current": "<record>"}, {"failed": "code", "message": "..."},
///   {"registered": 13}]}
/// ```
enum ForwardedWrites {
    /// One request: a write, or (with `session`) an onDisconnect write to register for that
    /// session of the follower.
    struct Request: Sendable {
        var write: ClientWrite
        var session: String?
    }

    /// What became of one request.
    enum Outcome: Sendable {
        case write(ClientWriteOutcome)
        case registered(Int64)
    }

    /// One request as it goes in a batch (``body(_:node:)``).
    static func encode(_ request: Request) -> [UInt8] {
        let write = request.write
        var object: [String: JSONValue] = ["w": .string(self.record(write.write)), "i": self.encode(write.identity)]
        switch write.condition {
        case .none: break
        case .etag(let etag): object["c"] = .object(["etag": .string(etag)])
        case .hash(let hash): object["c"] = .object(["hash": .string(hash)])
        }
        if !write.reads.isEmpty { object["r"] = .array(write.reads.map { .array([.string($0.path.string), .string($0.hash)]) }) }
        if write.wantsNode { object["n"] = .bool(true) }
        if let registration = write.registration { object["reg"] = .int(registration) }
        if let session = request.session { object["session"] = .string(session) }
        return JSONWriter.bytes(.object(object))
    }

    /// A batch's body: `node` and the requests, each as ``encode(_:)`` made it.
    static func body(_ requests: [[UInt8]], node: Int32) -> [UInt8] {
        var body = Array(#"{"node":\#(node),"requests":["#.utf8)
        body.reserveCapacity(body.count + requests.reduce(2) { $0 + $1.count + 1 })
        for (i, request) in requests.enumerated() {
            if i > 0 { body.append(UInt8(ascii: ",")) }
            body += request
        }
        body += Array("]}".utf8)
        return body
    }

    /// - Throws: `.invalidJSON` naming what is wrong.
    static func decode(_ bytes: [UInt8]) throws(DatabaseError) -> (node: Int32, requests: [Request]) {
        let json = try self.parse(bytes)
        guard let node = json["node"]?.int64Value, let node32 = Int32(exactly: node), case .array(let items)? = json["requests"] else {
            throw DatabaseError(.invalidJSON, "A forwarded write names no node or no requests.")
        }
        var requests: [Request] = []
        for item in items {
            guard case .string(let record)? = item["w"], let identity = item["i"] else {
                throw DatabaseError(.invalidJSON, "A forwarded write has no write or no identity.")
            }
            var write = ClientWrite(write: try self.write(record), identity: try self.identity(identity))
            if let condition = item["c"] {
                if let etag = condition["etag"]?.stringValue {
                    write.condition = .etag(etag)
                } else if let hash = condition["hash"]?.stringValue {
                    write.condition = .hash(hash)
                }
            }
            if case .array(let reads)? = item["r"] {
                for read in reads {
                    guard case .array(let pair) = read, pair.count == 2, let path = pair[0].stringValue, let hash = pair[1].stringValue
                    else {
                        throw DatabaseError(.invalidJSON, "A forwarded transaction's read is not a [path, hash] pair.")
                    }
                    write.reads.append((try DatabasePath(validating: path, function: "transaction", argument: "read path"), hash))
                }
            }
            write.wantsNode = item["n"]?.boolValue ?? false
            write.registration = item["reg"]?.int64Value
            requests.append(Request(write: write, session: item["session"]?.stringValue))
        }
        return (node32, requests)
    }

    /// `committed`: the leader's last committed record when it answered (its data then, which
    /// the follower shows before answering).
    static func encode(_ outcomes: [Outcome], committed: Int64?) -> [UInt8] {
        let items: [JSONValue] = outcomes.map { outcome in
            switch outcome {
            case .registered(let id): return .object(["registered": .int(id)])
            case .write(.written(let sequence, let node)):
                var object: [String: JSONValue] = ["seq": sequence.map { .int($0) } ?? .null]
                if let node { object["node"] = .string(self.record(.set(.root, WriteValue(node: node)))) }
                return .object(object)
            case .write(.denied): return .object(["denied": .bool(true)])
            case .write(.stale): return .object(["stale": .bool(true)])
            case .write(.changed(let etag, let current)):
                var object: [String: JSONValue] = ["changed": .string(etag)]
                if let current { object["current"] = .string(self.record(.set(.root, WriteValue(node: current)))) }
                return .object(object)
            case .write(.failed(let error)): return .object(["failed": .string(error.code.name), "message": .string(error.message)])
            }
        }
        var answer: [String: JSONValue] = ["outcomes": .array(items)]
        if let committed { answer["committed"] = .int(committed) }
        return JSONWriter.bytes(.object(answer))
    }

    /// - Throws: `.invalidJSON` naming what is wrong.
    static func decodeOutcomes(_ bytes: [UInt8], count: Int) throws(DatabaseError) -> (outcomes: [Outcome], committed: Int64?) {
        let json = try self.parse(bytes)
        guard case .array(let items)? = json["outcomes"], items.count == count else {
            throw DatabaseError(.invalidJSON, "The leader's answer to \(count) forwarded writes holds another number of outcomes.")
        }
        var outcomes: [Outcome] = []
        for item in items {
            if let id = item["registered"]?.int64Value {
                outcomes.append(.registered(id))
            } else if let sequence = item["seq"] {
                let node = try item["node"]?.stringValue.map { text throws(DatabaseError) in try self.node(text) }
                outcomes.append(.write(.written(sequence: sequence.int64Value, node: node)))
            } else if item["denied"] != nil {
                outcomes.append(.write(.denied))
            } else if item["stale"] != nil {
                outcomes.append(.write(.stale))
            } else if let etag = item["changed"]?.stringValue {
                let current = try item["current"]?.stringValue.map { text throws(DatabaseError) in try self.node(text) }
                outcomes.append(.write(.changed(etag: etag, current: current)))
            } else if let code = item["failed"]?.stringValue {
                let message = item["message"]?.stringValue ?? "The write failed at the leader."
                outcomes.append(.write(.failed(DatabaseError(DatabaseError.Code.named(code) ?? .clusterUnavailable, message))))
            } else {
                throw DatabaseError(.invalidJSON, "The leader's answer holds an outcome of no known kind.")
            }
        }
        return (outcomes, json["committed"]?.int64Value)
    }

    // MARK: - Parts

    private static func parse(_ bytes: [UInt8]) throws(DatabaseError) -> JSONValue {
        var builder = JSONValueBuilder()
        do {
            return try bytes.withUnsafeBytes { raw in try JSONParser().parse(raw, into: &builder) }
        } catch let error as DatabaseError {
            throw error
        } catch {
            throw DatabaseError(.invalidJSON, "A forwarded write is not JSON: \(error).")
        }
    }

    private static func record(_ write: WriteOperation) -> String {
        Data(LogRecord.encode(write, sequence: 0, now: 0).readableBytesView).base64EncodedString()
    }

    private static func write(_ text: String) throws(DatabaseError) -> WriteOperation {
        guard let data = Data(base64Encoded: text) else { throw DatabaseError(.invalidJSON, "A forwarded write is not base64.") }
        return try LogRecord.decode(ByteBuffer(bytes: Array(data)), in: "A forwarded write").write
    }

    private static func node(_ text: String) throws(DatabaseError) -> Node {
        let write = try self.write(text)
        guard write.path.isRoot, write.entries.count == 1, let entry = write.entries.first, entry.path.isEmpty else {
            throw DatabaseError(.invalidJSON, "Forwarded data is not one value.")
        }
        return entry.value.node
    }

    private static func encode(_ identity: Identity) -> JSONValue {
        switch identity {
        case .admin: return .object(["admin": .bool(true)])
        case .anonymous: return .object(["anonymous": .bool(true)])
        case .user(let context, let expires): return .object(["auth": context.variable, "exp": expires.map { .int($0) } ?? .null])
        }
    }

    private static func identity(_ json: JSONValue) throws(DatabaseError) -> Identity {
        if json["admin"]?.boolValue == true { return .admin }
        if json["anonymous"]?.boolValue == true { return .anonymous }
        guard let auth = json["auth"] else { throw DatabaseError(.invalidJSON, "A forwarded write's identity is of no known kind.") }
        return .user(AuthContext(variable: auth), expires: json["exp"]?.int64Value)
    }
}
