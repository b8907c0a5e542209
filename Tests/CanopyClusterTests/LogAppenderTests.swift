import CanopyCluster
import CanopyCore
import NIOCore
import Testing

@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct LogAppenderTests {
    @Test func concurrentAppendsGoInBatchesAndEachReturnsItsCommittedPosition() async throws {
        try await TestCluster.with(nodes: 1, port: 9301) { cluster in
            let lease = try #require(try await cluster.store.acquire("demo", by: cluster.nodes[0]))
            let appender = LogAppender(store: cluster.store, lease: lease, next: 1)
            let count = 300
            let positions = try await withThrowingTaskGroup(of: (Int, Int64).self) { group in
                for index in 0..<count {
                    group.addTask { (index, try await appender.append(ByteBuffer(string: "r\(index)"))) }
                }
                var positions: [Int: Int64] = [:]
                for try await (index, seq) in group { positions[index] = seq }
                return positions
            }
            #expect(Set(positions.values) == Set(1...Int64(count)))
            #expect(appender.batchesCommitted < count)
            let log = try await cluster.store.read("demo", after: 0)
            #expect(log.map(\.seq) == Array(1...Int64(count)))
            // Each record stands at the position its append returned.
            for (index, seq) in positions { #expect(String(buffer: log[Int(seq) - 1].bytes) == "r\(index)") }
        }
    }

    @Test func afterATakeoverEveryAppendFailsAndNoneIsInTheLog() async throws {
        try await TestCluster.with(nodes: 2, port: 9302) { cluster in
            let leaseA = try #require(try await cluster.store.acquire("demo", by: cluster.nodes[0]))
            let appender = LogAppender(store: cluster.store, lease: leaseA, next: 1)
            #expect(try await appender.append(ByteBuffer(string: "kept")) == 1)
            try await cluster.store.move("demo", to: cluster.nodes[1].id)
            for _ in 0..<3 {
                await TestCluster.expectFailure(.notLeader) { _ = try await appender.append(ByteBuffer(string: "refused")) }
            }
            #expect(try await cluster.store.read("demo", after: 0).map { String(buffer: $0.bytes) } == ["kept"])
            appender.close()
            await TestCluster.expectFailure(.closed) { _ = try await appender.append(ByteBuffer(string: "closed")) }
        }
    }
}
