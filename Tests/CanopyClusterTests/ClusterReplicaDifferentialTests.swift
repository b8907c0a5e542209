import Canopy
import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyTestSupport
import Foundation
import Testing

/// A differential across nodes with `--replicas`: random writes sent to random nodes, over REST
/// and over the SDK protocol (`Database(url:)`), while listeners with random queries on every
/// node follow; after every write, each listener shows what an embedded database fed the same
/// writes in the same order shows for its query, the windows each listener went through are, in
/// order, windows the embedded database went through, and its child events are the embedded
/// database's.
// One test at a time: each starts three nodes, and every node holds PostgreSQL connections.
@Suite(ClusterHarness.needed(), .serialized, .timeLimit(.minutes(5)))
struct ClusterReplicaDifferentialTests {
    /// The queries listeners pick from.
    static func query(_ n: Int, at reference: DatabaseReference) -> DatabaseQuery {
        switch n % 5 {
        case 0: return reference
        case 1: return reference.queryOrderedByValue().queryLimited(toLast: 3)
        case 2: return reference.queryOrderedByKey().queryLimited(toFirst: 2)
        case 3: return reference.queryOrderedByKey().queryStarting(atValue: "k3").queryEnding(atValue: "k6")
        default: return reference.queryOrdered(byChild: "n").queryLimited(toFirst: 3)
        }
    }

    /// Records every child event of `query` (kind, key, previous sibling, value) into `log`.
    static func record(_ query: DatabaseQuery, into log: Locked<[String]>) {
        for type in [DataEventType.childAdded, .childChanged, .childRemoved, .childMoved] {
            _ = query.observe(
                type,
                andPreviousSiblingKeyWith: { snapshot, previous in
                    let entry = "\(type) \(snapshot.key ?? "-") after \(previous ?? "-") \(snapshot.exportJSON)"
                    log.withLock { $0.append(entry) }
                })
        }
    }

    /// A random value for a child: a number, or an object with a number under `n`.
    static func value(_ random: inout SeededGenerator) -> Any {
        Bool.random(using: &random) ? Int.random(in: 0..<20, using: &random) : ["n": Int.random(in: 0..<20, using: &random)]
    }

    /// `value` as JSON text.
    static func json(_ value: Any) -> String {
        if let number = value as? Int { return "\(number)" }
        let object = value as? [String: Int] ?? [:]
        return "{" + object.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    @Test(arguments: [1, 2, 3])
    func listenersOnEveryNodeShowWhatAnEmbeddedDatabaseShows(seed: UInt64) async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration, extra: ["--replicas"]) { _, port in
                var random = SeededGenerator(seed: seed)
                let model = try Database.inMemory()
                defer { model.close() }
                // Node 1 leads; every node serves two SDK clients, each with a random query.
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/items/k0.json?ns=diff", body: "0")
                _ = try await model.reference(withPath: "items/k0").setValue(0)
                var clients: [Database] = []
                var listeners: [(node: Int, query: Int, seen: Locked<JSONValue?>, history: Locked<[JSONValue]>)] = []
                // The child events of each listener, and of the same query on the model.
                var events: [(remote: Locked<[String]>, model: Locked<[String]>)] = []
                for node in 1...3 {
                    for _ in 0..<2 {
                        let client = try ClusterRemoteClientTests.remote("http://127.0.0.\(node):\(port)?ns=diff")
                        clients.append(client)
                        let kind = Int.random(in: 0..<5, using: &random)
                        let seen = Locked<JSONValue?>(nil)
                        let history = Locked<[JSONValue]>([])
                        _ = Self.query(kind, at: client.reference(withPath: "items")).observe(.value) { snapshot in
                            let json = snapshot.exportJSON
                            seen.withLock { $0 = json }
                            history.withLock { $0.append(json) }
                        }
                        listeners.append((node, kind, seen, history))
                        let pair = (remote: Locked<[String]>([]), model: Locked<[String]>([]))
                        Self.record(Self.query(kind, at: client.reference(withPath: "items")), into: pair.remote)
                        Self.record(Self.query(kind, at: model.reference(withPath: "items")), into: pair.model)
                        events.append(pair)
                    }
                }
                defer { for client in clients { client.close() } }
                // The windows the model went through, by listener.
                var windows: [[JSONValue]] = []
                for listener in listeners {
                    windows.append([try await Self.query(listener.query, at: model.reference(withPath: "items")).getData().exportJSON])
                }

                for step in 0..<40 {
                    let index = Int.random(in: 0..<9, using: &random)
                    let key = "k\(index)"
                    let node = Int.random(in: 1...3, using: &random)
                    let operation = Int.random(in: 0..<4, using: &random)
                    let value = Self.value(&random)
                    let other = "k\((index + Int.random(in: 1..<9, using: &random)) % 9)"
                    let otherValue = Self.value(&random)
                    // Sent to `node`, over REST or by one of its SDK clients; awaited before the next.
                    let client = clients[(node - 1) * 2 + Int.random(in: 0..<2, using: &random)]
                    let reference = client.reference(withPath: "items")
                    switch operation {
                    case 0:
                        let put = try NodeHTTP.request(
                            "PUT", host: "127.0.0.\(node)", port: port, "/items/\(key).json?ns=diff", body: Self.json(value))
                        #expect(put.status == 200, "\(put.raw)")
                        _ = try await model.reference(withPath: "items/\(key)").setValue(value)
                    case 1:
                        _ = try await reference.child(key).setValue(value)
                        _ = try await model.reference(withPath: "items/\(key)").setValue(value)
                    case 2:
                        _ = try await reference.updateChildValues([key: value, other: otherValue])
                        _ = try await model.reference(withPath: "items").updateChildValues([key: value, other: otherValue])
                    default:
                        let delete = try NodeHTTP.request("DELETE", host: "127.0.0.\(node)", port: port, "/items/\(key).json?ns=diff")
                        #expect(delete.status == 200, "\(delete.raw)")
                        _ = try await model.reference(withPath: "items/\(key)").removeValue()
                    }
                    for (n, listener) in listeners.enumerated() {
                        let expected = try await Self.query(listener.query, at: model.reference(withPath: "items")).getData().exportJSON
                        if windows[n].last != expected { windows[n].append(expected) }
                        try await ClusterReplicaTests.eventually(
                            "step \(step): the listener on node \(listener.node) (query \(listener.query)) shows the model's window"
                        ) { listener.seen.withLock { $0 } == expected }
                    }
                }
                // Each listener raised the child events the model raised for its query, in order.
                for (n, pair) in events.enumerated() {
                    try await ClusterReplicaTests.eventually("the child events of listener \(n) match the model's") {
                        pair.remote.value.count >= pair.model.value.count
                    }
                    #expect(!pair.model.value.isEmpty)
                    #expect(
                        pair.remote.value == pair.model.value, "listener \(n) on node \(listeners[n].node), query \(listeners[n].query)")
                }
                // No listener showed a window the model never had, or two out of order.
                for (n, listener) in listeners.enumerated() {
                    var remaining = windows[n][...]
                    for shown in listener.history.value {
                        guard let at = remaining.firstIndex(of: shown) else {
                            Issue.record(
                                "The listener on node \(listener.node) (query \(listener.query)) showed \(shown), out of the model's order")
                            break
                        }
                        remaining = remaining[at...]
                    }
                }
            }
        }
    }
}
