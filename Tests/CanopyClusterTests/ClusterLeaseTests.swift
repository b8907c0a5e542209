import CanopyCluster
import CanopyCore
import NIOCore
import Testing

@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterLeaseTests {
    static func records(_ values: [String]) -> [ByteBuffer] { values.map { ByteBuffer(string: $0) } }

    @Test func aKilledLeadersNamespaceIsTakenOverAndItsLateAppendsRefused() async throws {
        try await TestCluster.with(nodes: 2, port: 9101) { cluster in
            let (store, a, b) = (cluster.store, cluster.nodes[0], cluster.nodes[1])
            let leaseA = try #require(try await store.acquire("demo", by: a))
            #expect(leaseA.epoch == 1)
            // A live leader keeps its namespace.
            #expect(try await store.acquire("demo", by: b) == nil)
            let leader = try #require(try await store.leader(of: "demo"))
            #expect(leader.node == a.id && leader.advertise == "http://127.0.0.1:9101" && leader.alive)
            try await store.append(Self.records(["w1", "w2", "w3"]), from: 1, under: leaseA)
            #expect(try await store.head(of: "demo") == 3)

            try await ClusterHarness.killSession(ofNode: a.id, cluster.configuration)
            let leaseB = try #require(try await store.acquire("demo", by: b))
            #expect(leaseB.epoch == 2)
            // The old leader's append, at the next position or at a later one, commits nothing.
            for first in [Int64(4), 5] {
                await TestCluster.expectFailure(.notLeader) { try await store.append(Self.records(["late"]), from: first, under: leaseA) }
            }
            try await store.append(Self.records(["w4"]), from: 4, under: leaseB)
            // A position already taken is refused whatever the epoch.
            await TestCluster.expectFailure(.notLeader) { try await store.append(Self.records(["again"]), from: 4, under: leaseB) }
            let log = try await store.read("demo", after: 0)
            #expect(log.map(\.seq) == [1, 2, 3, 4])
            #expect(log.map(\.epoch) == [1, 1, 1, 2])
            #expect(log.map { String(buffer: $0.bytes) } == ["w1", "w2", "w3", "w4"])
        }
    }

    @Test func aLeaderCutFromPostgreSQLLosesItsNamespaceWhenItsLeaseRunsOut() async throws {
        try await TestCluster.with(nodes: 2, port: 9102, lease: .seconds(1)) { cluster in
            let (store, a, b) = (cluster.store, cluster.nodes[0], cluster.nodes[1])
            let leaseA = try #require(try await store.acquire("demo", by: a))
            // A sends no heartbeat (as when cut off); its session and lock stay. B polls until the
            // lease, judged by PostgreSQL's clock, has run out (a hang guard, not a latency bound).
            var leaseB: NamespaceLease?
            let giveUp = ContinuousClock.now + .seconds(60)
            while leaseB == nil && ContinuousClock.now < giveUp {
                leaseB = try await store.acquire("demo", by: b)
                if leaseB == nil { try await Task.sleep(for: .milliseconds(100)) }
            }
            let taken = try #require(leaseB)
            #expect(taken.epoch == leaseA.epoch + 1)
            #expect(!a.holdsLease)
            await TestCluster.expectFailure(.notLeader) { try await store.append(Self.records(["stale"]), from: 1, under: leaseA) }
            try await store.append(Self.records(["fresh"]), from: 1, under: taken)
            #expect(try await store.read("demo", after: 0).map(\.epoch) == [taken.epoch])
        }
    }

    @Test func aMoveHandsTheNamespaceOverAndFencesTheOldLeader() async throws {
        try await TestCluster.with(nodes: 2, port: 9103) { cluster in
            let (store, a, b) = (cluster.store, cluster.nodes[0], cluster.nodes[1])
            let leaseA = try #require(try await store.acquire("demo", by: a))
            let moved = try await store.move("demo", to: b.id)
            #expect(moved.node == b.id && moved.epoch == leaseA.epoch + 1)
            #expect(try await store.leader(of: "demo")?.node == b.id)
            await TestCluster.expectFailure(.notLeader) { try await store.append(Self.records(["old"]), from: 1, under: leaseA) }
            await TestCluster.expectFailure(.invalidValue) { try await store.move("nowhere", to: b.id) }
        }
    }

    /// Appends race a takeover: whatever interleaving happens, every append that returned is in
    /// the log, the log has no gap, and every record of the old epoch precedes every record of the
    /// new one.
    @Test func appendsRacingATakeoverLeaveOneLinearLog() async throws {
        try await TestCluster.with(nodes: 2, port: 9104) { cluster in
            let (store, a, b) = (cluster.store, cluster.nodes[0], cluster.nodes[1])
            let leaseA = try #require(try await store.acquire("demo", by: a))
            let oldAppends = Task { () -> [Int64] in
                var acknowledged: [Int64] = []
                var next: Int64 = 1
                while next <= 2_000 {
                    do {
                        try await store.append([ByteBuffer(string: "a\(next)")], from: next, under: leaseA)
                        acknowledged.append(next)
                        next += 1
                    } catch {
                        break
                    }
                }
                return acknowledged
            }
            try await Task.sleep(for: .milliseconds(50))
            try await ClusterHarness.killSession(ofNode: a.id, cluster.configuration)
            let leaseB = try #require(try await store.acquire("demo", by: b))
            let acknowledged = await oldAppends.value
            let head = try await store.head(of: "demo")
            try await store.append([ByteBuffer(string: "b")], from: head + 1, under: leaseB)
            let log = try await store.read("demo", after: 0, limit: 10_000)
            #expect(log.map(\.seq) == Array(1...(head + 1)))
            #expect(Set(acknowledged).isSubset(of: Set(log.filter { $0.epoch == leaseA.epoch }.map(\.seq))))
            let lastOld = log.lastIndex { $0.epoch == leaseA.epoch } ?? -1
            let firstNew = log.firstIndex { $0.epoch == leaseB.epoch } ?? log.count
            #expect(lastOld < firstNew)
        }
    }
}
