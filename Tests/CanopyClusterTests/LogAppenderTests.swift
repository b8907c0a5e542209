import CanopyCluster
import CanopyCore
import NIOCore
import Testing

@Suite(.enabled(if: ClusterHarness.runnable, ClusterHarness.skipReason), .timeLimit(.minutes(2)))
struct LogAppenderTests {
    @Test func concurrentAppendsGoInBatchesAndEachReturnsItsCommittedPosition() async throws {
        try await ClusterHarness.withDatabase { configuration in
            let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
            let node = try await store.register(advertise: "http://127.0.0.1:9301", version: "0.1.0")
            let lease = try #require(try await store.acquire("demo", by: node))
            let appender = LogAppender(store: store, lease: lease, next: 1)
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
            let log = try await store.read("demo", after: 0)
            #expect(log.map(\.seq) == Array(1...Int64(count)))
            // Each record stands at the position its append returned.
            for (index, seq) in positions { #expect(String(buffer: log[Int(seq) - 1].bytes) == "r\(index)") }
            await node.leave()
            await store.close()
        }
    }

    @Test func afterATakeoverEveryAppendFailsAndNoneIsInTheLog() async throws {
        try await ClusterHarness.withDatabase { configuration in
            let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
            let a = try await store.register(advertise: "http://127.0.0.1:9302", version: "0.1.0")
            let b = try await store.register(advertise: "http://127.0.0.2:9302", version: "0.1.0")
            let leaseA = try #require(try await store.acquire("demo", by: a))
            let appender = LogAppender(store: store, lease: leaseA, next: 1)
            #expect(try await appender.append(ByteBuffer(string: "kept")) == 1)
            try await store.move("demo", to: b.id)
            for _ in 0..<3 {
                await #expect {
                    _ = try await appender.append(ByteBuffer(string: "refused"))
                } throws: { error in (error as? DatabaseError)?.code == .notLeader }
            }
            #expect(try await store.read("demo", after: 0).map { String(buffer: $0.bytes) } == ["kept"])
            appender.close()
            await #expect {
                _ = try await appender.append(ByteBuffer(string: "closed"))
            } throws: { error in (error as? DatabaseError)?.code == .closed }
            await a.leave()
            await b.leave()
            await store.close()
        }
    }
}
