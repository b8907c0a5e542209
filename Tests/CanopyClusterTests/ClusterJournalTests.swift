import Canopy
import CanopyCluster
import CanopyCore
import CanopyStorage
import Foundation
import Logging
import Synchronization
import Testing

/// The storage seam's cluster side: a database whose journal is a namespace's log in PostgreSQL,
/// as a leader node opens it.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(2)))
struct ClusterJournalTests {
    /// Opens namespace `name` as `node`'s leader would: load, take the lease, serve from the log.
    static func open(
        _ name: String, in cluster: TestCluster, by node: ClusterNode, checkpointThreshold: Int = 1 << 30,
        broken: Failures? = nil
    ) async throws -> (Database, NamespaceLease) {
        let lease = try #require(try await cluster.store.acquire(name, by: node))
        let start = try await cluster.store.load(name)
        var configuration = Database.Configuration()
        configuration.checkpointThreshold = checkpointThreshold
        let options = configuration.storeOptions(journalClock: SystemJournalClock())
        let open = ClusterJournal.opener(store: cluster.store, lease: lease, start: start, options: options) { error in
            broken?.errors.withLock { $0.append(error) }
        }
        let db = try Database(configuration: configuration, path: nil) { loop throws(DatabaseError) in open(loop) }
        return (db, lease)
    }

    /// What the journal reported breaking it.
    final class Failures: Sendable {
        let errors = Mutex<[DatabaseError]>([])
    }

    static func value(_ db: Database, _ path: String) async throws -> Any? {
        try await db.reference(withPath: path).getData().value
    }

    @Test func acknowledgedWritesAreInTheLogAndANewLeaderLoadsThem() async throws {
        try await TestCluster.with(nodes: 2, port: 9201) { cluster in
            let (db, _) = try await Self.open("shop", in: cluster, by: cluster.nodes[0])
            for i in 1...50 { _ = try await db.reference(withPath: "items/i\(i)").setValue(["n": i, "at": ServerValue.timestamp()]) }
            _ = try await db.reference(withPath: "items").updateChildValues(["i3": NSNull(), "i4/n": 400])
            // Every acknowledged write is in the log, in order, one record each.
            #expect(try await cluster.store.head(of: "shop") == 51)
            let expected = try #require(try await Self.value(db, "items") as? [String: Any])
            db.close()
            // Node A dies (its session ends, as a SIGKILL ends it).
            try await ClusterHarness.killSession(ofNode: cluster.nodes[0].id, cluster.configuration)

            // Node B takes the namespace over and serves exactly what A acknowledged.
            let (b, _) = try await Self.open("shop", in: cluster, by: cluster.nodes[1])
            let loaded = try #require(try await Self.value(b, "items") as? [String: Any])
            #expect(NSDictionary(dictionary: loaded).isEqual(to: expected))
            #expect(loaded["i3"] == nil && (loaded["i4"] as? [String: Any])?["n"] as? Int == 400)
            _ = try await b.reference(withPath: "items/i51/n").setValue(51)
            #expect(try await cluster.store.head(of: "shop") == 52)
            b.close()
        }
    }

    @Test func aCheckpointGoesToPostgreSQLAndTrimsTheLog() async throws {
        try await TestCluster.with(nodes: 1, port: 9202) { cluster in
            let (db, _) = try await Self.open("blog", in: cluster, by: cluster.nodes[0])
            for i in 1...20 { _ = try await db.reference(withPath: "posts/p\(i)").setValue(String(repeating: "x", count: i)) }
            try await db.checkpoint()
            let checkpoint = try #require(try await cluster.store.checkpoint(of: "blog"))
            #expect(checkpoint.seq == 20)
            #expect(try await cluster.store.read("blog", after: 0).isEmpty)
            for i in 21...25 { _ = try await db.reference(withPath: "posts/p\(i)").setValue(i) }
            #expect(try await cluster.store.read("blog", after: 0).map(\.seq) == Array(21...25))
            db.close()

            let start = try await cluster.store.load("blog")
            #expect(start.lastSequence == 25 && start.checkpointSequence == 20 && start.replayedRecords == 5)
            let (again, _) = try await Self.open("blog", in: cluster, by: cluster.nodes[0])
            let posts = try #require(try await Self.value(again, "posts") as? [String: Any])
            #expect(posts.count == 25 && posts["p7"] as? String == "xxxxxxx" && posts["p25"] as? Int == 25)
            again.close()
        }
    }

    @Test func aFencedLeaderAcknowledgesNothingAndUndoesTheWrite() async throws {
        try await TestCluster.with(nodes: 2, port: 9203) { cluster in
            let broken = Failures()
            let (db, _) = try await Self.open("bank", in: cluster, by: cluster.nodes[0], broken: broken)
            _ = try await db.reference(withPath: "a").setValue(100)
            // The namespace moves to node B: A's lease is fenced.
            try await cluster.store.move("bank", to: cluster.nodes[1].id)
            await #expect(throws: DatabaseError.self) { _ = try await db.reference(withPath: "a").setValue(1) }
            // The refused write is undone in memory, and the store refuses every later write.
            #expect(try await Self.value(db, "a") as? Int == 100)
            await #expect(throws: DatabaseError.self) { _ = try await db.reference(withPath: "b").setValue(2) }
            #expect(broken.errors.withLock { $0.map(\.code) } == [.notLeader])
            #expect(try await cluster.store.head(of: "bank") == 1)
            db.close()
        }
    }
}
