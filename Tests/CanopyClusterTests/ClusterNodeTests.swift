import CanopyCluster
import CanopyCore
import Testing

@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterNodeTests {
    @Test func aLiveNodesAddressCannotBeTakenButADeadNodesCan() async throws {
        // A lease long enough that only the lock tells the nodes' liveness here, and short enough
        // that the dead node's heartbeat gives up soon (a third of it).
        try await ClusterHarness.withDatabase(lease: .seconds(15)) { configuration in
            let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
            let first = try await store.register(advertise: "http://127.0.0.1:9001", version: "0.1.0")
            let other = try await store.register(advertise: "http://127.0.0.2:9001", version: "0.1.0")
            #expect(first.id != other.id)
            await TestCluster.expectFailure(.inUse) { _ = try await store.register(advertise: "http://127.0.0.1:9001", version: "0.1.0") }
            // The first node's process dies: its session ends and its lock frees.
            try await ClusterHarness.killSession(ofNode: first.id, configuration)
            let restarted = try await store.register(advertise: "http://127.0.0.1:9001", version: "0.1.0")
            #expect(restarted.id != first.id)
            // The dead node's heartbeat finds its row gone: it must register again.
            await #expect {
                try await first.heartbeat()
            } throws: { error in
                let code = (error as? DatabaseError)?.code
                return code == .notLeader || code == .clusterUnavailable
            }
            await restarted.leave()
            await other.leave()
            await store.close()
        }
    }

    @Test func aHeartbeatMovesTheLeaseDeadlineOn() async throws {
        try await TestCluster.with(nodes: 1, port: 9002) { cluster in
            let node = cluster.nodes[0]
            let before = node.leaseDeadline
            let sent = ContinuousClock.now
            try await node.heartbeat()
            // The deadline counts from when the heartbeat was sent (never later), whatever the
            // machine's load made it take.
            #expect(node.leaseDeadline >= sent + cluster.configuration.lease)
            #expect(node.leaseDeadline > before)
        }
    }

    @Test func aWrongPasswordOrAServerThatIsDownIsAClearErrorWithoutThePassword() async throws {
        var wrong = try ClusterHarness.configuration()
        wrong.password = "not-the-password-42"
        await #expect {
            _ = try await ClusterStore.connect(wrong, logger: ClusterHarness.logger)
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .clusterUnavailable && error.message.contains("password authentication failed")
                && !error.message.contains("not-the-password-42")
        }
        var down = try ClusterHarness.configuration()
        down.port = 1  // nothing listens on port 1
        await #expect {
            _ = try await ClusterStore.connect(down, logger: ClusterHarness.logger)
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .clusterUnavailable && error.message.contains("127.0.0.1:1")
        }
    }
}
