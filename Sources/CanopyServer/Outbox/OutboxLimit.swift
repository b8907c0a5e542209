/// The bound on what waits for one client, shared by event streams and SDK connections (for live
/// events, ``ServerConfiguration/streamBufferBytes``): a client with more than `bytes` waiting is
/// cut off, except that a single message alone is never too many.
struct OutboxLimit: Sendable, Equatable {
    let bytes: Int

    init(_ bytes: Int) {
        self.bytes = bytes
    }

    /// Whether `size` more bytes may join the `queued` ones.
    func admits(_ size: Int, queued: Int) -> Bool {
        queued == 0 || queued + size <= self.bytes
    }
}
