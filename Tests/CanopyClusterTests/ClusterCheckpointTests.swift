import CanopyCluster
import CanopyCore
import NIOCore
import Testing

@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterCheckpointTests {
    @Test func aCheckpointIsStoredInPartsAndTrimsTheLogBelowIt() async throws {
        try await TestCluster.with(nodes: 1, port: 9201) { cluster in
            let store = cluster.store
            let lease = try #require(try await store.acquire("demo", by: cluster.nodes[0]))
            #expect(try await store.checkpoint(of: "demo") == nil)
            try await store.append((1...10).map { ByteBuffer(string: "w\($0)") }, from: 1, under: lease)
            var generator = SystemRandomNumberGenerator()
            let tree = ByteBuffer(bytes: (0..<10_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try await store.writeCheckpoint(tree, through: 6, under: lease, partSize: 4_096)
            let stored = try #require(try await store.checkpoint(of: "demo"))
            #expect(stored.seq == 6)
            #expect(stored.bytes == tree)
            #expect(try await store.read("demo", after: 0).map(\.seq) == [7, 8, 9, 10])
            #expect(try await store.head(of: "demo") == 10)
            // A newer checkpoint replaces the older one.
            try await store.writeCheckpoint(ByteBuffer(string: "small"), through: 10, under: lease)
            let replaced = try await store.checkpoint(of: "demo")
            #expect(replaced?.seq == 10 && replaced?.bytes == ByteBuffer(string: "small"))
            #expect(try await store.read("demo", after: 0).isEmpty)
            #expect(try await store.head(of: "demo") == 10)
            await TestCluster.expectFailure(.invalidValue) {
                try await store.writeCheckpoint(ByteBuffer(string: "ahead"), through: 11, under: lease)
            }
        }
    }

    @Test func aFencedLeaderCannotWriteACheckpoint() async throws {
        try await TestCluster.with(nodes: 2, port: 9202) { cluster in
            let store = cluster.store
            let leaseA = try #require(try await store.acquire("demo", by: cluster.nodes[0]))
            try await store.append([ByteBuffer(string: "w1"), ByteBuffer(string: "w2")], from: 1, under: leaseA)
            try await store.move("demo", to: cluster.nodes[1].id)
            await TestCluster.expectFailure(.notLeader) {
                try await store.writeCheckpoint(ByteBuffer(string: "old"), through: 2, under: leaseA)
            }
            #expect(try await store.checkpoint(of: "demo") == nil)
            #expect(try await store.read("demo", after: 0).count == 2)
        }
    }
}
