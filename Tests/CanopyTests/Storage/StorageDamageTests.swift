import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// Damaged files: a torn tail is cut off (a crash mid-append), damage before the end or in a
/// checkpoint refuses to open with the file and offset named, and leftovers of a crash during a
/// checkpoint are recognised.
@Suite("Storage damage: torn tails, bit flips, interrupted checkpoints")
struct StorageDamageTests {
    /// The directory of one test: Swift Testing makes a suite instance for each test, and the
    /// directory is removed with it when the test ends.
    let dir = TemporaryDirectory()

    /// A closed database at `dir` holding `count` writes `items/iN = "value N"`.
    static func makeDatabase(_ dir: TemporaryDirectory, count: Int) throws {
        let db = try Database(path: dir.path, .manual())
        try Self.setItems(db, 0..<count)
        db.close()
    }

    /// Writes `items/iN = "value N"` for each N of `range`, then drains `db`.
    static func setItems(_ db: Database, _ range: Range<Int>) throws {
        for index in range { try db.reference(withPath: "items/i\(index)").queueSetValue("value \(index)") }
        db.drain()
    }

    static func expectedItems(_ count: Int) -> JSONValue {
        var items: [String: JSONValue] = [:]
        for index in 0..<count { items["i\(index)"] = .string("value \(index)") }
        return ["items": .object(items)]
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
    static func write(_ bytes: [UInt8], to path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    /// The offsets at which the records of a journal segment start.
    static func recordOffsets(_ bytes: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var offset = JournalFormat.headerSize
        while offset + 8 <= bytes.count {
            offsets.append(offset)
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            offset += 8 + length
        }
        return offsets
    }

    /// Makes a closed database at `dir` holding `count` writes (``makeDatabase(_:count:)``), then
    /// damages its last journal segment: `damage` changes the file's bytes, given its records'
    /// offsets. Returns the segment's file name and path, its bytes before and after, and the offsets.
    static func damageLastSegment(
        _ dir: TemporaryDirectory, count: Int, _ damage: (inout [UInt8], _ offsets: [Int]) -> Void
    ) throws -> (name: String, path: String, clean: [UInt8], damaged: [UInt8], offsets: [Int]) {
        try Self.makeDatabase(dir, count: count)
        let name = try #require(dir.segments.last)
        let path = dir.file(name)
        let clean = try Self.bytes(path)
        let offsets = Self.recordOffsets(clean)
        var damaged = clean
        damage(&damaged, offsets)
        try Self.write(damaged, to: path)
        return (name, path, clean, damaged, offsets)
    }

    @Test("A torn record at the end is cut off and reported; the database goes on", arguments: ["half", "zeros", "length"])
    func tornTail(kind: String) throws {
        let (_, segment, clean, _, _) = try Self.damageLastSegment(dir, count: 5) { bytes, offsets in
            let lastRecord = Array(bytes[offsets.last!...])
            switch kind {
            case "half": bytes += lastRecord.prefix(lastRecord.count / 2)  // a crash mid-append
            case "zeros": bytes += [UInt8](repeating: 0, count: 700)  // the file grew, the data never came
            default: bytes += [0xFF, 0xFF, 0xFF, 0x7F, 1, 2]  // a length running past the end
            }
        }

        let db = try Database(path: dir.path, .manual())
        #expect(try exportedTree(db) == Self.expectedItems(5))
        var notes: [String] = []
        db.reference(withPath: "items/i5").setValue("value 5", withCompletionBlock: { _, _ in })
        db.drain()
        let status = try #require(try Self.status(db))
        notes = status.recoveryNotes
        #expect(notes.contains { $0.contains("cut a torn record") && $0.contains("offset \(clean.count)") }, "\(notes)")
        db.close()
        // The cut left exactly the valid records, and appending went on after them.
        let after = try Self.bytes(segment)
        #expect(Array(after.prefix(clean.count)) == clean)
        #expect(try reopenedTree(dir.path) == Self.expectedItems(6))
    }

    static func status(_ db: Database) throws -> StorageStatus? {
        final class Box: @unchecked Sendable { var status: StorageStatus? }  // @unchecked: filled and read on the draining thread
        let box = Box()
        let store = try #require(db.core.store)
        db.core.perform { [core = db.core] in box.status = StorageStatus(store: store, syncPolicy: db.syncPolicy, root: core.engine.root) }
        db.drain()
        return box.status
    }

    @Test("A bit flip in a record before the end refuses to open, naming the file and offset, and changes nothing")
    func bitFlipInMiddle() throws {
        let (name, segment, _, bytes, offsets) = try Self.damageLastSegment(dir, count: 6) { $0[$1[2] + 20] ^= 0x10 }
        for _ in 0..<2 {  // the failed open released the lock and left the file as it was
            do {
                _ = try Database(path: dir.path, .manual())
                Issue.record("a damaged journal opened")
            } catch {
                #expect(error.code == .corrupted)
                #expect(error.message.contains(name) && error.message.contains("offset \(offsets[2])"), "\(error.message)")
            }
            #expect(try Self.bytes(segment) == bytes)
        }
    }

    @Test("A damaged record header (length) before valid records is damage, not a torn tail")
    func damagedLengthInMiddle() throws {
        let offsets = try Self.damageLastSegment(dir, count: 4) { $0[$1[1] + 1] ^= 0x40 }.offsets
        #expect { _ = try Database(path: dir.path, .manual()) } throws: { error in
            (error as? DatabaseError)?.code == .corrupted && "\(error)".contains("offset \(offsets[1])")
        }
    }

    @Test("A bit flip in a checkpoint refuses to open, naming the checkpoint")
    func bitFlipInCheckpoint() throws {
        let db = try Database(path: dir.path, .manual())
        try Self.setItems(db, 0..<200)
        db.checkpoint { _ in }
        db.drain()
        db.close()
        let name = try #require(dir.checkpoints.first)
        var bytes = try Self.bytes(dir.file(name))
        bytes[bytes.count / 2] ^= 0x01
        try Self.write(bytes, to: dir.file(name))
        #expect { _ = try Database(path: dir.path, .manual()) } throws: { error in
            let error = error as? DatabaseError
            return error?.code == .corrupted && error!.message.contains(name) && error!.message.contains("offset")
        }
    }

    @Test("Leftovers of a crash during a checkpoint (a temporary file, covered journal files) are cleaned up")
    func interruptedCheckpoint() throws {
        let db = try Database(path: dir.path, .manual())
        try Self.setItems(db, 0..<50)
        let oldSegment = try #require(dir.segments.first)
        let oldBytes = try Self.bytes(dir.file(oldSegment))
        db.checkpoint { _ in }
        db.drain()
        try Self.setItems(db, 50..<60)
        db.close()
        #expect(!dir.segments.contains(oldSegment))
        // As if the process died after the rename but before retiring the journal, while writing
        // a later checkpoint's temporary file.
        try Self.write(oldBytes, to: dir.file(oldSegment))
        try Self.write([1, 2, 3], to: dir.file("checkpoint-00000000000000ff.canopy.tmp"))

        #expect(try reopenedTree(dir.path) == Self.expectedItems(60))
        #expect(!dir.segments.contains(oldSegment))
        #expect(!dir.names.contains { $0.hasSuffix(".tmp") })
    }

    @Test("Checkpoints plus journal give the same tree as the journal alone, and as memory")
    func checkpointEquivalence() throws {
        let journalOnly = TemporaryDirectory()
        let withCheckpoints = TemporaryDirectory()
        defer {
            journalOnly.remove()
            withCheckpoints.remove()
        }
        let a = try Database(path: journalOnly.path, .manual())
        let b = try Database(path: withCheckpoints.path, .manual(checkpointThreshold: 4_096))
        let oracle = try Database.inMemory(.manual())
        defer { oracle.close() }
        for (index, operation) in CrashWorkload.operations(seed: 42, count: 800).enumerated() {
            for db in [a, b, oracle] { try CrashRecoveryTests.apply(operation, to: db) }
            if index % 50 == 0 { for db in [a, b, oracle] { db.drain() } }
        }
        for db in [a, b, oracle] { db.drain() }
        let expected = try exportedTree(oracle)
        a.close()
        b.close()
        #expect(journalOnly.checkpoints.isEmpty)
        #expect(withCheckpoints.checkpoints.count == 1)
        let reopenedA = try Database(path: journalOnly.path, .manual())
        let reopenedB = try Database(path: withCheckpoints.path, .manual())
        defer {
            reopenedA.close()
            reopenedB.close()
        }
        #expect(try exportedTree(reopenedA) == expected)
        #expect(try exportedTree(reopenedB) == expected)
        let statusB = try #require(try Self.status(reopenedB))
        #expect(statusB.checkpointSequence > 0)
        #expect(statusB.replayedAtOpen < 800)
    }

    @Test("Every sync policy keeps the data across a clean close", arguments: [SyncPolicy.always, .periodic(.milliseconds(5)), .never])
    func policies(policy: SyncPolicy) throws {
        let db = try Database(path: dir.path, .manual(policy))
        let log = CompletionLog()
        for index in 0..<20 { StorageFaultTests.set(db, "items/i\(index)", "value \(index)", log, index) }
        db.drain()
        #expect(log.succeeded == Array(0..<20))
        db.close()
        #expect(try reopenedTree(dir.path) == Self.expectedItems(20))
    }
}
