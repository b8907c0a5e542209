import Canopy
import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyTestSupport
import Foundation
import Testing

/// `canopy cluster move` hands a served namespace to another node: the old leader stops serving
/// it (never stale reads) and redirects its clients to the new one.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(3)))
struct ClusterMoveTests {
    @Test func aMovedNamespaceIsServedByItsNewLeaderOnly() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration) { _, port in
                let store = try await ClusterStore.connect(configuration, logger: ClusterHarness.logger)
                defer { Task { await store.close() } }

                let first = try ClusterRemoteClientTests.remote("http://127.0.0.1:\(port)?ns=moving")
                defer { first.close() }
                _ = try await first.reference(withPath: "state").setValue("before")
                let before = try #require(try await store.leader(of: "moving"))
                #expect(before.advertise == "http://127.0.0.1:\(port)")

                // Move it to node 2 (as `canopy cluster move moving --to ID` does), then write there.
                let target = try #require(try await store.status().nodes.first { $0.advertise == "http://127.0.0.2:\(port)" })
                let moved = try await store.move("moving", to: target.id)
                let second = try ClusterRemoteClientTests.remote("http://127.0.0.2:\(port)?ns=moving")
                defer { second.close() }
                _ = try await second.reference(withPath: "state").setValue("after")
                #expect(try await store.leader(of: "moving")?.node == target.id, "node 2 serves it")
                #expect(moved.node == target.id)

                // Node 1 stops serving its copy (at its next heartbeat): a new client of node 1 reads
                // the new value, from node 2.
                let deadline = ContinuousClock.now + .seconds(60)
                var seen: Any?
                repeat {
                    let reader = try ClusterRemoteClientTests.remote("http://127.0.0.1:\(port)?ns=moving")
                    seen = try await reader.reference(withPath: "state").getData().value
                    reader.close()
                    if seen as? String == "after" { break }
                    try await Task.sleep(for: .milliseconds(200))
                } while ContinuousClock.now < deadline
                #expect(seen as? String == "after")
                #expect(try await store.leader(of: "moving")?.node == target.id, "node 1 did not take the namespace back")
            }
        }
    }
}
