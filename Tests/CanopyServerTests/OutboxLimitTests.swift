import Testing

@testable import CanopyServer

/// The bound shared by event streams and SDK connections.
@Suite("Outbox limit")
struct OutboxLimitTests {
    @Test("more than the limit waiting is refused; a single message alone never is")
    func admits() {
        let limit = OutboxLimit(10)
        #expect(limit.admits(100, queued: 0))
        #expect(limit.admits(4, queued: 6))
        #expect(!limit.admits(5, queued: 6))
    }
}
