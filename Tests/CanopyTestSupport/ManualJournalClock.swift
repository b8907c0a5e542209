import CanopyStorage
import Synchronization

/// A journal clock that moves only when a test calls ``advance(by:)``, which wakes the journal
/// writers using it: a periodic sync then runs because the test said the interval passed, not
/// because the wall clock did.
package final class ManualJournalClock: JournalClock {
    private let state = Mutex<(now: UInt64, wakers: [@Sendable () -> Void])>((1_000_000_000, []))

    package init() {}

    package func now() -> UInt64 { self.state.withLock { $0.now } }

    /// Never by itself: ``advance(by:)`` wakes the writer.
    package func monotonicDeadline(reaching time: UInt64) -> UInt64 { UInt64.max / 2 }

    package func onAdvance(_ wake: @escaping @Sendable () -> Void) {
        self.state.withLock { $0.wakers.append(wake) }
    }

    /// Moves the clock forward `nanoseconds` and wakes every writer using it.
    package func advance(by nanoseconds: UInt64) {
        let wakers = self.state.withLock { state in
            state.now &+= nanoseconds
            return state.wakers
        }
        for wake in wakers { wake() }
    }
}
