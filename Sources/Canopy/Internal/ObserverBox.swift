/// What the engine holds for one observer: the user's blocks and how to build its snapshots.
// @unchecked Sendable: the blocks are invoked only on the loop thread (documented on every
// `observe` API); all stored properties are immutable.
final class ObserverBox: @unchecked Sendable {
    let handle: DatabaseHandle
    let block: (DataSnapshot, String?) -> Void
    let cancel: ((any Error) -> Void)?
    let once: Bool
    let query: DatabaseQuery

    init(
        handle: DatabaseHandle, query: DatabaseQuery, once: Bool, block: @escaping (DataSnapshot, String?) -> Void,
        cancel: ((any Error) -> Void)?
    ) {
        self.handle = handle
        self.query = query
        self.once = once
        self.block = block
        self.cancel = cancel
    }
}
