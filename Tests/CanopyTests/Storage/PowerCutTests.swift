import CanopyStorage
import CanopyTestSupport
import CoreFoundation
import Foundation
import Synchronization
import Testing

@testable import Canopy

#if canImport(Glibc)
    import Glibc
#endif

/// A ``FileIO`` that remembers how much of each file was `fsync`ed, so a test can make the copy
/// a power cut would leave: every file cut back to its last synced size.
final class SyncTrackingFileIO: FileIO {
    private let real = POSIXFileIO()
    private let state = Mutex((paths: [Int32: String](), synced: [String: Int]()))

    func open(_ path: String, flags: Int32, mode: UInt32) -> Int32 {
        let fd = self.real.open(path, flags: flags, mode: mode)
        if fd >= 0 { self.state.withLock { $0.paths[fd] = path } }
        return fd
    }

    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int { self.real.write(fd, bytes) }

    func fsync(_ fd: Int32) -> Int32 {
        let status = self.real.fsync(fd)
        var info = stat()
        if status == 0, fstat(fd, &info) == 0 {
            self.state.withLock { state in
                if let path = state.paths[fd] { state.synced[path] = Int(info.st_size) }
            }
        }
        return status
    }

    func ftruncate(_ fd: Int32, _ size: Int) -> Int32 { self.real.ftruncate(fd, size) }

    func rename(_ from: String, _ to: String) -> Int32 {
        let status = self.real.rename(from, to)
        if status == 0 { self.state.withLock { $0.synced[to] = $0.synced.removeValue(forKey: from) } }
        return status
    }

    func unlink(_ path: String) -> Int32 { self.real.unlink(path) }

    func close(_ fd: Int32) {
        self.state.withLock { _ = $0.paths.removeValue(forKey: fd) }
        self.real.close(fd)
    }

    /// Copies `directory` to `destination` as a power cut would leave it: each file cut to what
    /// was synced (files never synced are left out).
    func copyAfterPowerCut(_ directory: String, to destination: String) throws {
        let synced = self.state.withLock { $0.synced }
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where name != "LOCK" {
            guard let size = synced[directory + "/" + name] else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            try bytes.prefix(size).write(to: URL(fileURLWithPath: destination + "/" + name))
        }
    }
}

@Suite("Sync policies after a simulated power cut")
struct PowerCutTests {
    /// Writes 50 children with `policy`, waits for every acknowledgement, then opens the copy a
    /// power cut would leave; returns how many acknowledged children it holds.
    func survivors(_ policy: SyncPolicy) throws -> Int {
        let dir = TemporaryDirectory()
        let copy = TemporaryDirectory()
        defer {
            dir.remove()
            copy.remove()
        }
        let io = SyncTrackingFileIO()
        let db = try Database(path: dir.path, .manual(policy), io: io)
        let log = CompletionLog()
        for index in 0..<50 { StorageFaultTests.set(db, "items/i\(index)", index, log, index) }
        db.drain()
        #expect(log.succeeded.count == 50)
        try io.copyAfterPowerCut(dir.path, to: copy.path)
        db.close()
        let reopened = try Database(path: copy.path, .manual())
        defer { reopened.close() }
        let tree = try exportedTree(reopened)
        return tree["items"]?.objectValue?.count ?? 0
    }

    @Test("always: every acknowledged write survives a power cut")
    func always() throws {
        #expect(try self.survivors(.always) == 50)
    }

    @Test("never, and periodic before its interval: acknowledged writes may be lost on a power cut, never torn")
    func unsynced() throws {
        // Nothing was synced since the segment was created: the cut copy opens cleanly, empty.
        #expect(try self.survivors(.never) == 0)
        #expect(try self.survivors(.periodic(.seconds(3_600))) == 0)
    }
}
