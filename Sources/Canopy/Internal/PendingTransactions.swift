import CanopyCore
import Synchronization

/// Transactions that were started but whose block has not run yet. A set or update applied in
/// the meantime to an overlapping location aborts them (spec §9.4): the transaction would
/// otherwise silently replace data written after it was started.
final class PendingTransactions: Sendable {
    final class Entry: Sendable {
        let path: DatabasePath
        private let aborted = Atomic<Bool>(false)
        init(path: DatabasePath) { self.path = path }
        var isAborted: Bool { self.aborted.load(ordering: .acquiring) }
        func abort() { self.aborted.store(true, ordering: .releasing) }
    }

    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    func start(_ path: DatabasePath) -> Entry {
        let entry = Entry(path: path)
        self.entries.withLock { $0[ObjectIdentifier(entry)] = entry }
        return entry
    }

    func finish(_ entry: Entry) {
        self.entries.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(entry)) }
    }

    /// Aborts pending transactions at, above or below any of `paths`. Loop thread.
    func abortOverlapping(_ paths: [DatabasePath]) {
        self.entries.withLock { table in
            guard !table.isEmpty else { return }
            for entry in table.values where paths.contains(where: { $0.contains(entry.path) || entry.path.contains($0) }) {
                entry.abort()
            }
        }
    }
}
