import CanopyCore
import Synchronization

/// What the database holds for one aggregate observer: the user's blocks, whether it is still
/// active, and (on the loop) its engine listener.
// @unchecked Sendable: the blocks run and `listener` is read and written only on the loop thread;
// `active` is atomic; everything else is immutable.
final class AggregateObserverBox: @unchecked Sendable {
    let handle: DatabaseHandle
    let query: AggregateQuery
    let block: (AggregateSnapshot) -> Void
    let cancel: ((any Error) -> Void)?
    private let active = Atomic<Bool>(true)
    /// Loop thread only.
    var listener: AggregateListener?

    init(handle: DatabaseHandle, query: AggregateQuery, block: @escaping (AggregateSnapshot) -> Void, cancel: ((any Error) -> Void)?) {
        self.handle = handle
        self.query = query
        self.block = block
        self.cancel = cancel
    }

    var isActive: Bool { self.active.load(ordering: .acquiring) }

    func deactivate() { self.active.store(false, ordering: .releasing) }
}
