/// The byte accounting of one client's outbox: what waits to go out, what went to the transport
/// but was not yet taken by the client, and the long answers (counted apart, against a limit of
/// their own).
struct OutboxBytes: Sendable, Equatable {
    /// Messages other than long answers, queued.
    var queued = 0
    /// Messages handed to the transport (written to a channel), not yet taken by the client.
    var inFlight = 0
    /// Long answers, queued or being written.
    var answers = 0

    /// What counts against the limit on messages other than long answers.
    var waiting: Int { self.queued + self.inFlight }
}
