import Canopy
import CanopyTestSupport
import Foundation
import Testing

@Suite("A remote database raises the embedded database's events", .serialized)
struct RemoteEventTests {
    /// Runs `body` on its own thread with a remote database on a fresh in-process server.
    static func throughServer(namespace: String, _ body: @escaping @Sendable (Database) throws -> Void) async throws {
        try await TestServer.serving { server in
            let url = server.url(namespace: namespace)
            try await onOwnThread {
                let db = try Database.remoteForTest(url)
                defer { db.close() }
                try body(db)
            }
        }
    }

    @Test("random listeners and writes through a server: exactly the oracle's events", arguments: [1, 2] as [UInt64])
    func randomWrites(seed: UInt64) async throws {
        try await Self.throughServer(namespace: "model\(seed)") { db in
            try EventModelTests.run(seed: seed, steps: 300, on: db) { try db.settle() }
        }
    }

    @Test("random queries and writes through a server: exactly the oracle's events and reads", arguments: [11, 12] as [UInt64])
    func randomQueries(seed: UInt64) async throws {
        try await Self.throughServer(namespace: "queries\(seed)") { db in
            try QueryModelTests.run(seed: seed, steps: 300, on: db) { try db.settle() }
        }
    }
}
