import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

extension TemporaryDirectory {
    /// The journal segments, oldest first.
    var segments: [String] { self.names.filter { $0.hasPrefix("journal-") } }
    var checkpoints: [String] { self.names.filter { $0.hasPrefix("checkpoint-") } }
}

extension Database.Configuration {
    /// A manually driven configuration (tests call `drain()`), with a sync policy.
    static func manual(_ policy: SyncPolicy = .always, checkpointThreshold: Int = 64 << 20) -> Database.Configuration {
        var configuration = Database.Configuration()
        configuration.loopMode = .manual
        configuration.syncPolicy = policy
        configuration.checkpointThreshold = checkpointThreshold
        configuration.clock = { 1_700_000_000_000 }
        return configuration
    }
}

/// Collects write completions (called on the loop thread while the test drains).
final class CompletionLog: @unchecked Sendable {  // @unchecked: used only on the draining test thread
    var results: [Int: DatabaseError?] = [:]

    func callback(_ index: Int) -> @Sendable ((any Error)?, DatabaseReference) -> Void {
        { [self] error, _ in self.results[index] = .some(error as? DatabaseError) }
    }

    var succeeded: [Int] { self.results.filter { $0.value == nil }.map(\.key).sorted() }
    var failed: [Int] { self.results.filter { $0.value != nil }.map(\.key).sorted() }
}

/// The tree of the database at `path`, reopened (drain mode) and closed again.
func reopenedTree(_ path: String) throws -> JSONValue {
    let reopened = try Database(path: path, .manual())
    defer { reopened.close() }
    return try exportedTree(reopened)
}

/// The whole tree of `db` with priorities (drains a manual database).
func exportedTree(_ db: Database) throws -> JSONValue {
    var result: JSONValue?
    db.reference().observeSingleEvent(of: .value) { snapshot in result = snapshot.exportJSON }
    db.drain()
    return try #require(result)
}

/// The whole tree of `db` as export-format JSON text (drains a manual database).
func exportedText(_ db: Database) throws -> String {
    var result: String?
    db.reference().observeSingleEvent(of: .value) { snapshot in result = snapshot.jsonString(exportFormat: true) }
    db.drain()
    return try #require(result)
}
