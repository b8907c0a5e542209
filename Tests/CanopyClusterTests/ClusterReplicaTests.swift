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
// One test at a time: each starts three nodes, and every node holds PostgreSQL connections.
@Suite(ClusterHarness.needed(), .serialized, .timeLimit(.minutes(5)))
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

                // The leader takes forwarded writes only with the cluster's node secret.
                let forged = #"{"node": 1, "requests": [{"w": "AAAA", "i": {"admin": true}}]}"#
                for headers in [[:], ["Canopy-Node-Secret": "guess"]] {
                    let refused = try NodeHTTP.request(
                        "POST", host: "127.0.0.1", port: port, "/.cluster/write?ns=rep", body: forged, headers: headers)
                    #expect(refused.status == 401 && refused.body == #"{"error":"Permission denied"}"#, "\(refused.raw)")
                }
                let secret = try await store.nodeSecret()
                let malformed = try NodeHTTP.request(
                    "POST", host: "127.0.0.1", port: port, "/.cluster/write?ns=rep", body: forged, headers: ["Canopy-Node-Secret": secret])
                #expect(malformed.status == 400, "\(malformed.raw)")

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

                // Rules set at the leader: writes are judged there at once, reads at the follower
                // once it took the rules up (after a heartbeat).
                #expect(try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/.json?ns=rep").status == 200)
                let newRules = #"{"rules": {"items": {".read": true, ".write": false}, "open": {".write": true}}}"#
                #expect(
                    try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/.settings/rules.json?ns=rep", body: newRules).status == 200
                )
                #expect(try NodeHTTP.request("PUT", host: "127.0.0.2", port: port, "/items/z.json?ns=rep", body: "1").status == 401)
                #expect(try NodeHTTP.request("PUT", host: "127.0.0.2", port: port, "/open/z.json?ns=rep", body: "1").status == 200)
                try await Self.eventually("node 2 judges reads by the new rules") {
                    try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/.json?ns=rep").status == 401
                }
                #expect(try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/items/a.json?ns=rep").body == "1")
                await store.close()
            }
        }
    }

    @Test func transactionsFromThreeNodesEndExact() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration, extra: ["--replicas"]) { _, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/.json?ns=bank", body: #"{"counter":0,"a":50,"b":50}"#)
                let clients = try (1...3).map { try ClusterRemoteClientTests.remote("http://127.0.0.\($0):\(port)?ns=bank") }
                defer { for client in clients { client.close() } }
                // Each node's client increments the counter and moves money between two accounts.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (n, client) in clients.enumerated() {
                        group.addTask {
                            for i in 0..<10 {
                                _ = try await client.reference(withPath: "counter").runTransactionBlock { data in
                                    data.value = ((data.value as? Int) ?? 0) + 1
                                    return .success(withValue: data)
                                }
                                let amount = (n + i) % 7 + 1
                                try await client.runTransaction { transaction in
                                    let a = try transaction.getData(client.reference(withPath: "a")).value as? Int ?? 0
                                    let b = try transaction.getData(client.reference(withPath: "b")).value as? Int ?? 0
                                    try transaction.setValue(a - amount, for: client.reference(withPath: "a"))
                                    try transaction.setValue(b + amount, for: client.reference(withPath: "b"))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let root = try await store.load("bank").root
                #expect(root.child(ChildKey("counter")) == .leaf(.int(30)))
                let a = root.child(ChildKey("a")).exportJSON.int64Value ?? -1
                let b = root.child(ChildKey("b")).exportJSON.int64Value ?? -1
                #expect(a + b == 100)
                #expect(a < 50)
                // Every node reads the same, itself.
                for n in 1...3 {
                    let counter = try NodeHTTP.request("GET", host: "127.0.0.\(n)", port: port, "/counter.json?ns=bank")
                    #expect(counter.status == 200 && counter.body == "30", "node \(n)")
                }
                await store.close()
            }
        }
    }

    /// Large writes sent at once to a follower all reach the leader and show at the follower.
    /// (They are forwarded in batches of at most a few megabytes, a larger write alone; the
    /// bound itself is walked in `WriteForwarderQueueTests`.)
    @Test func largeWritesAtAFollowerAllReachTheLeader() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration, extra: ["--replicas"]) { _, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/.json?ns=big", body: #"{"start":true}"#)
                let client = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=big")
                defer { client.close() }
                // 16 writes of 1 MB each and one of 6 MB, sent at once through one connection.
                let sizes = Array(repeating: 1 << 20, count: 16) + [6 << 20]
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (i, size) in sizes.enumerated() {
                        group.addTask {
                            let blob = String(repeating: Character(UnicodeScalar(UInt8(97 + i % 26))), count: size)
                            _ = try await client.reference(withPath: "blobs/b\(i)").setValue(blob)
                        }
                    }
                    try await group.waitForAll()
                }
                let root = try await store.load("big").root
                for (i, size) in sizes.enumerated() {
                    let blob = root.child(ChildKey("blobs")).child(ChildKey("b\(i)")).exportJSON.stringValue
                    #expect(blob?.count == size && blob?.first == Character(UnicodeScalar(UInt8(97 + i % 26))), "blob \(i)")
                }
                // The follower that forwarded them shows them too.
                let read = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/blobs/b16.json?ns=big")
                #expect(read.status == 200 && read.body.utf8.count == (6 << 20) + 2)
                await store.close()
            }
        }
    }

    @Test func onDisconnectWritesOfAFollowersClientsRunOnceWhenTheyLeaveOrTheNodeDies() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration, extra: ["--replicas"]) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/presence.json?ns=chat", body: #"{"x":"none"}"#)
                // Two clients of node 2, a follower, each register a write for when they leave.
                let leaving = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=chat")
                let staying = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=chat")
                defer { staying.close() }
                for (client, name) in [(leaving, "leaving"), (staying, "staying")] {
                    _ = try await client.reference(withPath: "presence/\(name)").setValue("here")
                    _ = try await client.reference(withPath: "presence/\(name)").onDisconnectSetValue("gone")
                }
                // Registered in PostgreSQL under node 2.
                let node2 = try #require(try await store.status().nodes.first { $0.advertise == "http://127.0.0.2:\(port)" })
                #expect(try await store.onDisconnectWrites(of: "chat", node: node2.id).count == 2)

                // One leaves: node 2 has the leader run its write.
                leaving.close()
                try await Self.eventually("the leaving client's write ran") {
                    try await store.load("chat").root.node(at: [ChildKey("presence"), ChildKey("leaving")]) == .leaf(.string("gone"))
                }
                #expect(try await store.onDisconnectWrites(of: "chat", node: node2.id).count == 1)
                #expect(try await store.load("chat").root.node(at: [ChildKey("presence"), ChildKey("staying")]) == .leaf(.string("here")))

                // Node 2 dies: the leader runs the other one after a heartbeat.
                nodes[1].kill9()
                try await Self.eventually("the dead follower's client's write ran") {
                    try await store.load("chat").root.node(at: [ChildKey("presence"), ChildKey("staying")]) == .leaf(.string("gone"))
                }
                #expect(try await store.onDisconnectWrites(of: "chat", node: node2.id).isEmpty)
                // Once each: the log holds one record setting each to "gone".
                let records = try await store.read("chat", after: 0)
                var gone = 0
                for record in records {
                    let write = try LogRecord.decode(record.bytes, in: "test").write
                    if write.entries.contains(where: { $0.value.node == .leaf(.string("gone")) }) { gone += 1 }
                }
                #expect(gone == 2)
                await store.close()
            }
        }
    }

    /// Runs blocking `body` on a thread of its own (not one of Swift concurrency's few).
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    @Test func killingFollowersAndTheLeaderUnderLoadLosesNoAcknowledgedWriteAndListenersResume() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration, extra: ["--replicas"]) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/items/start.json?ns=load", body: "0")
                // A listener on every node.
                let clients = try (1...3).map { try ClusterRemoteClientTests.remote("http://127.0.0.\($0):\(port)?ns=load") }
                defer { for client in clients { client.close() } }
                let seen = (0..<3).map { _ in Locked<JSONValue?>(nil) }
                for (client, box) in zip(clients, seen) {
                    _ = client.reference(withPath: "items").observe(.value) { snapshot in
                        let json = snapshot.exportJSON
                        box.withLock { $0 = json }
                    }
                }
                // Three writers, each sending its writes to the nodes in turn, each write sent again
                // to the next node until one acknowledges it (a set: sending it twice leaves the same).
                let acknowledged = Locked<[String: Int]>([:])
                let retried = Locked<Set<String>>([])
                let writers = (0..<3).map { writer in
                    Task {
                        try await Self.onThread {
                            for i in 0..<60 {
                                let key = "w\(writer)-\(i)"
                                var node = (writer + i) % 3
                                var attempts = 0
                                while true {
                                    let response = try? NodeHTTP.request(
                                        "PUT", host: "127.0.0.\(node + 1)", port: port, "/items/\(key).json?ns=load", body: "\(i)")
                                    if response?.status == 200 { break }
                                    attempts += 1
                                    if attempts > 500 { throw DatabaseError(.clusterUnavailable, "write \(key) never acknowledged") }
                                    if let status = response?.status, ![0, 307, 503].contains(status) {
                                        throw DatabaseError(.clusterUnavailable, "write \(key): \(response?.raw ?? "")")
                                    }
                                    retried.withLock { _ = $0.insert(key) }
                                    node = (node + 1) % 3
                                    usleep(20_000)
                                }
                                acknowledged.withLock { $0[key] = i }
                            }
                        }
                    }
                }
                // Kill a follower, then the leader, while they write; each comes back.
                try await Self.eventually("writes under way") { acknowledged.withLock { $0.count } >= 20 }
                nodes[1].kill9()
                try nodes[1].start()
                try await Self.eventually("more writes") { acknowledged.withLock { $0.count } >= 70 }
                let leader = try #require(try await store.leader(of: "load"))
                let victim = try #require(nodes.first { leader.advertise == "http://\($0.host):\(port)" })
                victim.kill9()
                try victim.start()
                for writer in writers { try await writer.value }

                // Every acknowledged write is in the log; one acknowledged at its first attempt, once.
                let root = try await store.load("load").root
                let written = acknowledged.withLock { $0 }
                #expect(written.count == 180)
                for (key, value) in written {
                    #expect(root.node(at: [ChildKey("items"), ChildKey(key)]) == .leaf(.int(Int64(value))), "\(key)")
                }
                var counts: [String: Int] = [:]
                for record in try await store.read("load", after: 0, limit: 100_000) {
                    let write = try LogRecord.decode(record.bytes, in: "test").write
                    if write.path.keys.count == 2 { counts[write.path.keys[1].string, default: 0] += 1 }
                }
                let once = retried.withLock { $0 }
                for key in written.keys where !once.contains(key) { #expect(counts[key] == 1, "\(key)") }
                // The listeners on every node resume and end with the data.
                let expected = root.child(ChildKey("items")).exportJSON
                for (n, box) in seen.enumerated() {
                    try await Self.eventually("the listener on node \(n + 1) ends with the data") { box.withLock { $0 } == expected }
                }
                await store.close()
            }
        }
    }

    /// PUTs `body` at `target` on node `node` until it is acknowledged (a generous hang guard).
    static func putUntilAcknowledged(node: Int, port: Int, _ target: String, body: String) async throws {
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            let response = try await Self.onThread { try? NodeHTTP.request("PUT", host: "127.0.0.\(node)", port: port, target, body: body) }
            if response?.status == 200 { return }
            guard ContinuousClock.now < deadline else {
                Issue.record("PUT \(target) at node \(node) never acknowledged: \(response?.raw ?? "no answer")")
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test func followersServeReadsWhileTheLeaderIsPausedAndWritesGoToItsSuccessor() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(3, configuration, extra: ["--replicas"]) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/items/a.json?ns=paused", body: "1")
                for node in 2...3 {
                    #expect(try NodeHTTP.request("GET", host: "127.0.0.\(node)", port: port, "/items/a.json?ns=paused").body == "1")
                }
                // The leader pauses (its sockets stay open): followers still answer reads at once.
                nodes[0].pause()
                defer { nodes[0].resume() }
                for node in 2...3 {
                    let read = try NodeHTTP.request("GET", host: "127.0.0.\(node)", port: port, "/items/a.json?ns=paused")
                    #expect(read.status == 200 && read.body == "1", "node \(node): \(read.raw)")
                }
                // A write at a follower waits for the paused leader, fails, and once the leader's
                // lease ran out a follower takes the namespace over and acknowledges it.
                try await Self.putUntilAcknowledged(node: 2, port: port, "/items/b.json?ns=paused", body: "2")
                let leader = try #require(try await store.leader(of: "paused"))
                #expect(leader.advertise != "http://127.0.0.1:\(port)")
                // The old leader comes back: it no longer leads, and writes at the other follower
                // find the new leader.
                nodes[0].resume()
                try await Self.putUntilAcknowledged(node: 3, port: port, "/items/c.json?ns=paused", body: "3")
                #expect(try NodeHTTP.request("GET", host: "127.0.0.3", port: port, "/items.json?ns=paused").body.contains(#""c":3"#))
                try await Self.putUntilAcknowledged(node: 1, port: port, "/items/d.json?ns=paused", body: "4")
                let items = try await store.load("paused").root.child(ChildKey("items")).exportJSON
                #expect(items == .object(["a": .int(1), "b": .int(2), "c": .int(3), "d": .int(4)]))
                await store.close()
            }
        }
    }

    @Test func aNodeFollowsNoMoreNamespacesThanItsLimitAndRedirectsTheRest() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration, extra: ["--replicas", "--max-replicated-namespaces", "1"]) { _, port in
                for name in ["one", "two"] {
                    _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/x.json?ns=\(name)", body: "1")
                }
                let followed = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/x.json?ns=one")
                #expect(followed.status == 200 && followed.body == "1")
                let redirected = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/x.json?ns=two")
                #expect(redirected.status == 307)
                #expect(redirected.headers["location"] == "http://127.0.0.1:\(port)/x.json?ns=two")
            }
        }
    }

    @Test func aFollowerThatLaggedPastACheckpointLoadsItAgain() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration, extra: ["--replicas"]) { nodes, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/blobs/start.json?ns=lag", body: "0")
                #expect(try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/blobs/start.json?ns=lag").body == "0")
                let client = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=lag")
                defer { client.close() }
                let last = Locked<JSONValue?>(nil)
                _ = client.reference(withPath: "blobs/b199").observe(.value) { snapshot in
                    let json = snapshot.exportJSON
                    last.withLock { $0 = json }
                }
                _ = try await client.reference(withPath: "blobs/start").getData()
                // The follower pauses while the leader writes 20 MB: a checkpoint deletes the log
                // the follower has not read.
                nodes[1].pause()
                let blob = String(repeating: "x", count: 100_000)
                for i in 0..<200 {
                    let put = try NodeHTTP.request(
                        "PUT", host: "127.0.0.1", port: port, "/blobs/b\(i).json?ns=lag", body: "\"\(i)\(blob)\"")
                    #expect(put.status == 200)
                }
                try await Self.eventually("the leader wrote a checkpoint") {
                    (try await store.status().namespaces.first { $0.name == "lag" }?.checkpoint ?? 0) > 2
                }
                nodes[1].resume()
                // The follower finds the records it needs gone, loads the checkpoint, and goes on.
                try await Self.eventually("the follower shows the last write") {
                    let read = try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/blobs/b199.json?ns=lag")
                    return read.body == "\"199\(blob)\""
                }
                try await Self.eventually("its listener got the last write") { last.value == .string("199\(blob)") }
                _ = try NodeHTTP.request("PUT", host: "127.0.0.1", port: port, "/blobs/after.json?ns=lag", body: "1")
                try await Self.eventually("the follower follows the log after the checkpoint") {
                    try NodeHTTP.request("GET", host: "127.0.0.2", port: port, "/blobs/after.json?ns=lag").body == "1"
                }
                await store.close()
            }
        }
    }
}
