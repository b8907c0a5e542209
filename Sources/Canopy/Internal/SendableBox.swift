/// Carries a user closure (or other non-Sendable value) to the loop thread.
// @unchecked Sendable: the value is only used on the loop thread, which the API documents as the
// thread every callback runs on; the caller hands it over and does not use it concurrently.
struct LoopCallback<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// What the engine holds for one observer: the user's blocks and how to build its snapshots.
// @unchecked Sendable: the blocks are invoked only on the loop thread (documented on every
// `observe` API); all stored properties are immutable.
final class ObserverBox: @unchecked Sendable {
    let handle: DatabaseHandle
    let block: (DataSnapshot, String?) -> Void
    let cancel: ((any Error) -> Void)?
    let once: Bool
    let query: DatabaseQuery

    init(handle: DatabaseHandle, query: DatabaseQuery, once: Bool, block: @escaping (DataSnapshot, String?) -> Void, cancel: ((any Error) -> Void)?) {
        self.handle = handle
        self.query = query
        self.once = once
        self.block = block
        self.cancel = cancel
    }
}
