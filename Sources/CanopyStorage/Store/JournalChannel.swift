import CanopyCore
import Synchronization

/// How the journal thread reaches the loop: a coalesced "durable through N" notice (at most one
/// queued at a time) and failure notices, posted without backpressure so the journal thread
/// never waits for a loop that may be waiting for it.
final class JournalChannel: Sendable {
    let loop: any StoreLoop
    let store = Mutex<Unowned<DurableStore>?>(nil)
    private let acknowledgedSequence = Atomic<UInt64>(0)
    private let noticeQueued = Atomic<Bool>(false)

    init(loop: any StoreLoop) {
        self.loop = loop
    }

    var acknowledged: UInt64 { self.acknowledgedSequence.load(ordering: .acquiring) }

    /// Runs `body` on the loop thread with the store.
    func post(_ body: @escaping @Sendable (DurableStore) -> Void) {
        guard let store = self.store.withLock({ $0 }) else { return }
        self.loop.executeUnbounded { body(store.object) }
    }

    func durable(_ sequence: UInt64) {
        self.acknowledgedSequence.store(sequence, ordering: .releasing)
        guard !self.noticeQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
        self.post { [self] store in
            self.noticeQueued.store(false, ordering: .releasing)
            store.completeThrough(self.acknowledged)
        }
    }

    func failed(_ firstFailed: UInt64, _ error: DatabaseError, _ broken: Bool) {
        self.post { store in store.journalFailed(from: firstFailed, error: error, broken: broken) }
    }
}
