import Canopy
import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyStorage
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

/// `canopy serve --cluster --replicas`: nodes that do not lead a namespace follow its log and
/// serve its clients themselves, forwarding writes to the leader (the DocC article *Cluster*,
/// section *Replicas*). Three real nodes on 127.0.0.1–3 over a real PostgreSQL.
@Suite(.enabled(if: ClusterHarness.runnable, ClusterHarness.skipReason), .timeLimit(.minutes(5)))
struct ClusterReplicaTests {
    /// Waits (a generous hang guard) until `condition` holds.
    static func eventually(_ what: Comment, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !(try await condition()) {
            guard ContinuousClock.now < deadline else {
                Issue.record("Never happened: \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The JSON of `text`, for comparing bodies whatever their key order.
    static func json(_ text: String) throws -> JSONValue {
        var builder = JSONValueBuilder()
        return try JSONParser().parse(text, into: &builder)
    }

    @Test func aFollowerServesReadsAndListensAndAnswersWritesOnceItShowsThem() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration, extra: ["--replicas"]) { _, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                // Node 1 takes the namespace with a write.
                let first = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/items/a.json?ns=rep", body: "1")
                #expect(first.status == 200)
                #expect(try await store.leader(of: "rep")?.advertise == "http://127.0.0.1:\(port)")

                // Node 2 answers itself (no redirect), from the log it follows.
                let read = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/items.json?ns=rep")
                #expect(read.status == 200)
                #expect(try Self.json(read.body) == .object(["a": .int(1)]))

                // A listener on node 2 gets the leader's writes.
                let client = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=rep")
                defer { client.close() }
                let seen = Mutex<JSONValue?>(nil)
                let handle = client.reference(withPath: "items").observe(.value) { snapshot in
                    let json = snapshot.exportJSON
                    seen.withLock { $0 = json }
                }
                defer { client.reference(withPath: "items").removeObserver(withHandle: handle) }
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/items/b.json?ns=rep", body: "2")
                try await Self.eventually("node 2's listener sees node 1's write") {
                    seen.withLock { $0 } == .object(["a": .int(1), "b": .int(2)])
                }

                // Writes sent to node 2 are answered once node 2 shows them: read your own writes.
                for i in 0..<20 {
                    let put = try NodeHTTP.request("PUT", host: "127.0.0.2", port: port, "/items/c.json?ns=rep", body: "\(i)")
                    #expect(put.status == 200 && put.body == "\(i)", "\(put.raw)")
                    let back = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/items/c.json?ns=rep")
                    #expect(back.body == "\(i)", "round \(i)")
                }
                let patch = try NodeHTTP.request(
                    "PATCH", host: "127.0.0.2", port: port, "/items.json?ns=rep", body: #"{"d":4,"e":{"f":5}}"#)
                #expect(try Self.json(patch.body) == .object(["d": .int(4), "e": .object(["f": .int(5)])]))
                let push = try NodeHTTP.request("POST", host: "127.0.0.2", port: port, "/items.json?ns=rep", body: #""pushed""#)
                let name = try #require(try Self.json(push.body)["name"]?.stringValue)
                #expect(try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/items/\(name).json?ns=rep").body == #""pushed""#)
                let delete = try NodeHTTP.request("DELETE", host: "127.0.0.2", port: port, "/items/\(name).json?ns=rep")
                #expect(delete.status == 200)
                #expect(try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/items/\(name).json?ns=rep").body == "null")

                // A compare-and-set judged at the leader: the stale ETag is refused with the current one.
                let stale = try NodeHTTP.request(
                    "PUT", host: "127.0.0.2", port: port, "/items/c.json?ns=rep", body: "100", headers: ["if-match": "not-the-etag"])
                #expect(stale.status == 412)
                #expect(stale.body == "19")
                let etag = try #require(stale.headers["etag"])
                let matched = try NodeHTTP.request(
                    "PUT", host: "127.0.0.2", port: port, "/items/c.json?ns=rep", body: "100", headers: ["if-match": etag])
                #expect(matched.status == 200)

                // Rules are set at the leader.
                let rules = try NodeHTTP.request("PUT", host: "127.0.0.2", port: port, "/.settings/rules.json?ns=rep", body: "{}")
                #expect(rules.status == 307)
                #expect(rules.headers["location"] == "http://127.0.0.1:\(port)/.settings/rules.json?ns=rep")

                // Everything went through the leader's log, once.
                let start = try await store.load("rep")
                #expect(
                    start.root.child(ChildKey("items")).exportJSON
                        == .object(["a": .int(1), "b": .int(2), "c": .int(100), "d": .int(4), "e": .object(["f": .int(5)])]))

                // Node 2 reports what it applied, in the status and in its metrics.
                try await Self.eventually("node 2 reports itself a follower") {
                    let status = try await store.status()
                    let followers = status.namespaces.first { $0.name == "rep" }?.followers ?? []
                    return followers.contains { $0.applied == Int64(start.lastSequence) }
                }
                let metrics = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/.metrics")
                #expect(metrics.body.contains(#"canopy_replica_applied_records{namespace="rep"} \#(start.lastSequence)"#))
                await store.close()
            }
        }
    }
}
