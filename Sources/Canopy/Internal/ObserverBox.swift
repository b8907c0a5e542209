/// What the engine holds for one observer: the user's blocks and how to build its snapshots.
// @unchecked Sendable: the blocks are invoked only on the loop thread (documented on every
// `observe` API); all stored properties are immutable.
final class ObserverBox: @unchecked Sendable {
    let handle: DatabaseHandle
    let block: (DataSnapshot, String?) -> Void
    let cancel: ((any Error) -> Void)?
    let once: Bool
    let query: DatabaseQuery
    /// A `.value` observer that asked for metadata changes (see ``MetadataWatchers``).
    let watchesMetadata: Bool

    init(
        handle: DatabaseHandle, query: DatabaseQuery, once: Bool, block: @escaping (DataSnapshot, String?) -> Void,
        cancel: ((any Error) -> Void)?, watchesMetadata: Bool = false
    ) {
        self.handle = handle
        self.query = query
        self.once = once
        self.block = block
        self.cancel = cancel
        self.watchesMetadata = watchesMetadata
    }
}
