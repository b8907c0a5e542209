import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

/// Counts `fsync` calls on the real file system.
final class SyncCountingIO: FileIO {
    let syncs = Atomic<Int>(0)
    private let real = POSIXFileIO()

    func open(_ path: String, flags: Int32, mode: UInt32) -> Int32 { self.real.open(path, flags: flags, mode: mode) }
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int { self.real.write(fd, bytes) }
    func fsync(_ fd: Int32) -> Int32 {
        self.syncs.add(1, ordering: .relaxed)
        return self.real.fsync(fd)
    }
    func ftruncate(_ fd: Int32, _ size: Int) -> Int32 { self.real.ftruncate(fd, size) }
    func rename(_ from: String, _ to: String) -> Int32 { self.real.rename(from, to) }
    func unlink(_ path: String) -> Int32 { self.real.unlink(path) }
    func close(_ fd: Int32) { self.real.close(fd) }
}

@Suite("The journal's periodic sync, on a clock the test drives", .timeLimit(.minutes(1)))
struct JournalWriterSyncTests {
    /// A writer with the `periodic` policy on `clock`, appending to a fresh journal in `dir`.
    static func writer(_ dir: TemporaryDirectory, io: SyncCountingIO, clock: ManualJournalClock, durable: Locked<UInt64>) throws
        -> JournalWriter
    {
        let files = StorageFiles(io: io)
        let opened = try StorageRecovery(directory: dir.path, files: files).open()
        return JournalWriter(
            directory: dir.path, files: files, policy: .periodic(nanoseconds: 1_000_000_000),
            segmentPath: opened.segmentPath, fd: opened.segmentFD, offset: opened.segmentOffset, lastSequence: opened.start.lastSequence,
            clock: clock,
            callbacks: JournalWriter.Callbacks(
                durable: { sequence in durable.withLock { $0 = sequence } },
                failed: { _, error, _ in Issue.record("the journal failed: \(error)") }))
    }

    static func record(_ sequence: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        JournalFormat.appendRecord(.set(.root, WriteValue(node: .leaf(.int(Int64(sequence))))), sequence: sequence, now: 0, to: &bytes)
        return bytes
    }

    @Test("records are reported written at once and synced only once the interval has passed on the clock")
    func syncsWhenTheIntervalPasses() throws {
        let dir = TemporaryDirectory()
        let io = SyncCountingIO()
        let clock = ManualJournalClock()
        let durable = Locked<UInt64>(0)
        let writer = try Self.writer(dir, io: io, clock: clock, durable: durable)
        let syncsAtStart = io.syncs.load(ordering: .relaxed)

        #expect(writer.append(Self.record(1), last: 1))
        writer.waitUntilIdle()
        #expect(durable.value == 1)  // written: what `periodic` acknowledges
        #expect(io.syncs.load(ordering: .relaxed) == syncsAtStart)

        clock.advance(by: 999_999_999)  // not yet an interval
        writer.waitUntilIdle()
        #expect(io.syncs.load(ordering: .relaxed) == syncsAtStart)

        clock.advance(by: 1)  // the interval has passed: `waitUntilIdle` waits for the sync
        writer.waitUntilIdle()
        #expect(io.syncs.load(ordering: .relaxed) == syncsAtStart + 1)

        clock.advance(by: 5_000_000_000)  // nothing unsynced: no sync
        writer.waitUntilIdle()
        #expect(io.syncs.load(ordering: .relaxed) == syncsAtStart + 1)

        #expect(writer.append(Self.record(2), last: 2))
        clock.advance(by: 1_000_000_000)
        writer.waitUntilIdle()
        #expect(durable.value == 2)
        #expect(io.syncs.load(ordering: .relaxed) == syncsAtStart + 2)
        writer.close()
    }
}
