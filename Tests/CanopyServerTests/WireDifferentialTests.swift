import Canopy
import CanopyCore
import CanopyServer
import CanopyTestSupport
import Foundation
import Testing

/// The same random write script through the embedded API and through the SDKs' WebSocket
/// protocol: after every write, each query's observed value in the embedded engine equals what a
/// WebSocket listen of the same query holds, built only from the server's pushes.
@Suite("WebSocket listens against the embedded engine")
struct WireDifferentialTests {
    /// A query as the SDKs send it, and the same query through the Swift API.
    struct Query: @unchecked Sendable {  // @unchecked: the closure only builds queries.
        var wire: JSONValue?
        var embedded: (DatabaseReference) -> DatabaseQuery
    }

    static let queries: [Query] = [
        Query(wire: nil) { $0 },
        Query(wire: ["l": 3, "vf": "r", "i": "n"]) { $0.queryOrdered(byChild: "n").queryLimited(toLast: 3) },
        Query(wire: ["l": 2, "vf": "l", "i": ".key"]) { $0.queryOrderedByKey().queryLimited(toFirst: 2) },
        Query(wire: ["sp": 3, "ep": 6, "i": "n"]) { $0.queryOrdered(byChild: "n").queryStarting(atValue: 3).queryEnding(atValue: 6) },
        Query(wire: ["sp": "b", "i": "s", "l": 4, "vf": "l"]) {
            $0.queryOrdered(byChild: "s").queryStarting(atValue: "b").queryLimited(toFirst: 4)
        },
        Query(wire: ["ep": "k5", "i": ".key", "l": 3, "vf": "r"]) {
            $0.queryOrderedByKey().queryEnding(atValue: "k5").queryLimited(toLast: 3)
        },
        Query(wire: ["sp": 2, "sn": "k3", "i": "n", "l": 3, "vf": "l"]) {
            $0.queryOrdered(byChild: "n").queryStarting(atValue: 2, childKey: "k3").queryLimited(toFirst: 3)
        },
    ]

    /// A write: `p` (set) or `m` (multi-path update) at a path, with its data.
    struct Op {
        var action: String
        var path: String
        var data: JSONValue
    }

    static func script(seed: UInt64, count: Int) -> (initial: JSONValue, ops: [Op]) {
        var rng = SeededGenerator(seed: seed)
        let keys = (0..<12).map { "k\($0)" }
        func child() -> JSONValue {
            ["n": .int(Int64.random(in: 0...9, using: &rng)), "s": .string(["a", "b", "c"].randomElement(using: &rng)!)]
        }
        var initial: [String: JSONValue] = [:]
        for key in keys.prefix(6) { initial[key] = child() }
        var ops: [Op] = []
        for _ in 0..<count {
            let key = keys.randomElement(using: &rng)!
            let kind = Double.random(in: 0..<1, using: &rng)
            if kind < 0.35 {
                ops.append(Op(action: "p", path: "/diff/\(key)/n", data: .int(Int64.random(in: 0...9, using: &rng))))
            } else if kind < 0.5 {
                ops.append(Op(action: "p", path: "/diff/\(key)", data: .null))
            } else if kind < 0.75 {
                let other = keys.randomElement(using: &rng)!
                let s = ["a", "b", "c", "d"].randomElement(using: &rng)!
                ops.append(
                    Op(
                        action: "m", path: "/diff",
                        data: ["\(key)/s": .string(s), "\(other)/n": .int(Int64.random(in: 0...9, using: &rng))]))
            } else {
                ops.append(Op(action: "p", path: "/diff/\(key)", data: child()))
            }
        }
        return (.object(initial), ops)
    }

    /// The embedded engine: each query's last observed value after each write.
    static func embedded(initial: JSONValue, ops: [Op]) async throws -> [[JSONValue]] {
        let db = try Database.inMemory()
        defer { db.close() }
        let root = db.reference(withPath: "diff")
        try await root.setValue(initial.anyValue)
        let seen = Locked<[JSONValue]>(Array(repeating: .null, count: Self.queries.count))
        for (i, query) in Self.queries.enumerated() {
            query.embedded(root).observe(.value) { snapshot in seen.withLock { $0[i] = snapshot.json } }
        }
        var states: [[JSONValue]] = []
        for op in ops {
            let ref = db.reference(withPath: op.path)
            if op.action == "p" {
                try await ref.setValue(op.data.anyValue)
            } else {
                guard case .object(let members) = op.data else { throw TestFailure("update data must be an object") }
                try await ref.updateChildValues(members.mapValues(\.anyValue))
            }
            // Observers run on the loop right after the write, before its completion.
            states.append(seen.withLock { $0 })
        }
        return states
    }

    @Test("random scripts: every query's data after every write", .enabled(if: PythonClient.runnable, PythonClient.skipReason))
    func randomScripts() async throws {
        let directory = TemporaryDirectory()
        for seed: UInt64 in [1, 2, 3] {
            let (initial, ops) = Self.script(seed: seed, count: 120)
            let script: JSONValue = [
                "path": "/diff", "initial": initial, "queries": .array(Self.queries.map { $0.wire ?? .null }),
                "ops": .array(ops.map { ["a": .string($0.action), "p": .string($0.path), "d": $0.data] }),
            ]
            let scriptFile = directory.file("script-\(seed).json")
            let outFile = directory.file("states-\(seed).json")
            try Data(JSONWriter.bytes(script)).write(to: URL(fileURLWithPath: scriptFile))
            try await withLiveServer(makeServer()) { (port: Int) async throws in
                try await PythonClient.run(
                    "wire_protocol_client", ["ws://127.0.0.1:\(port)", "script_replay", scriptFile, outFile],
                    expecting: "wire: script_replay ok")
            }
            let remote = try json(String(decoding: try Data(contentsOf: URL(fileURLWithPath: outFile)), as: UTF8.self))
            guard case .array(let remoteStates) = remote else { throw TestFailure("no states: \(remote)") }
            let local = try await Self.embedded(initial: initial, ops: ops)
            #expect(remoteStates.count == ops.count)
            for (step, (embedded, wire)) in zip(local, remoteStates).enumerated() {
                guard case .array(let wireStates) = wire else { throw TestFailure("step \(step): \(wire)") }
                for (i, (e, w)) in zip(embedded, wireStates).enumerated() where e != w {
                    Issue.record(
                        "seed \(seed) step \(step) (\(ops[step].action) \(ops[step].path)) query \(i): embedded \(e), WebSocket \(w)")
                }
            }
        }
    }
}
