import NIOCore
import NIOWebSocket

/// Where an SDK connection's messages go: the seam between the session logic (``WireSession``,
/// ``WireRequests``, ``WireConnection``), which is the same for every transport, and the transport
/// that carries the messages. A WebSocket's ``WireOutbox`` writes them as frames; a long-poll
/// connection's ``LongPollOutbox`` hands them to the client's polls.
protocol WireSink: AnyObject, Sendable {
    /// Queues one application message (its JSON text). `push`: a data push, which may wait for
    /// the coalescing interval; otherwise an answer, which goes at once.
    func send(_ message: [UInt8], push: Bool)
    /// Queues an answer rendered once for many connections (a listen's initial data).
    func send(_ rendering: Rendering)
    /// Queues a push already rendered as one message's text (shared by many connections).
    func send(frame: ByteBuffer)
    /// Stops taking messages and returns once everything queued went out (or the client is gone).
    func finish() async
}

extension WireSink {
    /// Queues an answer (or a control message): it goes at once.
    func send(_ message: [UInt8]) {
        self.send(message, push: false)
    }
}

/// What carries an SDK connection, beside its ``WireSink``: the parts of a connection's lifecycle
/// that differ between a WebSocket (``WebSocketTransport``) and long polling (``LongPollSession``).
protocol WireTransport: Sendable {
    /// The connection was counted among the server's: messages may go out (the hello follows).
    func open()
    /// Ends the connection after what is queued (a protocol error, a redirect): on a WebSocket
    /// with a close frame carrying `code` and `reason`.
    func close(_ code: WebSocketErrorCode, reason: String) async
    /// Ends the connection at once (the server is shutting down before it started).
    func abort()
}
