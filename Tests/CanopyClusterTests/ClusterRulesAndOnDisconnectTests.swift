import CanopyCluster
import CanopyCore
import NIOCore
import Testing

@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterRulesAndOnDisconnectTests {
    @Test func rulesAreSharedAndOnlyTheLeaderSetsThem() async throws {
        try await TestCluster.with(nodes: 2, port: 9501) { cluster in
            let store = cluster.store
            let leaseA = try #require(try await store.acquire("blog", by: cluster.nodes[0]))
            #expect(try await store.rules(of: "blog") == nil)
            try await store.setRules(#"{"rules": {".read": true}}"#, under: leaseA)
            try await store.setRules(#"{"rules": {".read": false}}"#, under: leaseA)
            #expect(try await store.rules(of: "blog") == #"{"rules": {".read": false}}"#)
            let leaseB = try await store.move("blog", to: cluster.nodes[1].id)
            await TestCluster.expectFailure(.notLeader) { try await store.setRules(#"{"rules": {}}"#, under: leaseA) }
            #expect(try await store.rules(of: "blog") == #"{"rules": {".read": false}}"#)
            try await store.setRules(#"{"rules": {".write": true}}"#, under: leaseB)
            #expect(try await store.rules(of: "blog") == #"{"rules": {".write": true}}"#)
        }
    }

    /// A leader dies with clients' onDisconnect writes registered; the next leader runs them, once:
    /// a second attempt (a node racing it, or a retry) appends nothing.
    @Test func aDeadLeadersOnDisconnectWritesRunOnceOnTheNextLeader() async throws {
        try await TestCluster.with(nodes: 3, port: 9502) { cluster in
            let store = cluster.store
            let (a, b, c) = (cluster.nodes[0], cluster.nodes[1], cluster.nodes[2])
            let leaseA = try #require(try await store.acquire("chat", by: a))
            try await store.append([ByteBuffer(string: "w1")], from: 1, under: leaseA)
            let away = try await store.addOnDisconnect(ByteBuffer(string: "ada is away"), session: "s-ada", under: leaseA)
            let gone = try await store.addOnDisconnect(ByteBuffer(string: "grace is gone"), session: "s-grace", under: leaseA)
            let cancelled = try await store.addOnDisconnect(ByteBuffer(string: "cancelled"), session: "s-grace", under: leaseA)
            try await store.cancelOnDisconnect([cancelled], in: leaseA.namespace)

            try await ClusterHarness.killSession(ofNode: a.id, cluster.configuration)
            let leaseB = try #require(try await store.acquire("chat", by: b))
            let pending = try await store.onDisconnectWrites(of: "chat", node: a.id)
            #expect(pending.map(\.id) == [away, gone])
            #expect(pending.map(\.session) == ["s-ada", "s-grace"])
            #expect(pending.map { String(buffer: $0.write) } == ["ada is away", "grace is gone"])
            // A registration made through a dead leader's lease is refused.
            await TestCluster.expectFailure(.notLeader) {
                _ = try await store.addOnDisconnect(ByteBuffer(string: "late"), session: "s-x", under: leaseA)
            }

            let head = try await store.head(of: "chat")
            try await store.append(pending.map(\.write), from: head + 1, under: leaseB, runningOnDisconnect: pending.map(\.id))
            #expect(try await store.onDisconnectWrites(of: "chat", node: a.id).isEmpty)
            // Run again (by the same leader, or by a node that took over meanwhile): refused, nothing appended.
            await TestCluster.expectFailure(.notLeader) {
                try await store.append(pending.map(\.write), from: head + 3, under: leaseB, runningOnDisconnect: pending.map(\.id))
            }
            let moved = try await store.move("chat", to: c.id)
            await TestCluster.expectFailure(.notLeader) {
                try await store.append(pending.map(\.write), from: head + 3, under: moved, runningOnDisconnect: pending.map(\.id))
            }
            let log = try await store.read("chat", after: 0)
            #expect(log.map { String(buffer: $0.bytes) } == ["w1", "ada is away", "grace is gone"])
            #expect(log.map(\.epoch) == [leaseA.epoch, leaseB.epoch, leaseB.epoch])
        }
    }

    /// Running onDisconnect writes is fenced like any append: a leader that lost the namespace
    /// neither appends them nor consumes them.
    @Test func aFencedLeaderNeitherRunsNorConsumesOnDisconnectWrites() async throws {
        try await TestCluster.with(nodes: 2, port: 9503) { cluster in
            let store = cluster.store
            let leaseA = try #require(try await store.acquire("chat", by: cluster.nodes[0]))
            let id = try await store.addOnDisconnect(ByteBuffer(string: "bye"), session: "s-1", under: leaseA)
            try await store.move("chat", to: cluster.nodes[1].id)
            await TestCluster.expectFailure(.notLeader) {
                try await store.append([ByteBuffer(string: "bye")], from: 1, under: leaseA, runningOnDisconnect: [id])
            }
            #expect(try await store.onDisconnectWrites(of: "chat", node: cluster.nodes[0].id).map(\.id) == [id])
            #expect(try await store.read("chat", after: 0).isEmpty)
        }
    }
}
