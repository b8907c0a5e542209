import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("A remote database raises the embedded database's events", .serialized)
struct RemoteEventTests {
    @Test("random listeners and writes through a server: exactly the oracle's events", arguments: [1, 2] as [UInt64])
    func randomWrites(seed: UInt64) async throws {
        let server = try await TestServer.start()
        let url = server.url(namespace: "model\(seed)")
        try await server.whileRunning {
            try await onOwnThread {
                let db = try Database.remoteForTest(url)
                defer { db.close() }
                try EventModelTests.run(seed: seed, steps: 300, on: db) { try db.settle() }
            }
        }
    }

    @Test("random queries and writes through a server: exactly the oracle's events and reads", arguments: [11, 12] as [UInt64])
    func randomQueries(seed: UInt64) async throws {
        let server = try await TestServer.start()
        let url = server.url(namespace: "queries\(seed)")
        try await server.whileRunning {
            try await onOwnThread {
                let db = try Database.remoteForTest(url)
                defer { db.close() }
                try QueryModelTests.run(seed: seed, steps: 300, on: db) { try db.settle() }
            }
        }
    }
}
