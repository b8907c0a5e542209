/// What carries an outbox's messages to its client, as the outbox metrics label it (the
/// `transport` label of `canopy_slow_clients_total`).
enum OutboxTransport: Int, CaseIterable, Sendable {
    /// A server-sent-event stream (``EventStream``).
    case sse
    /// An SDK connection over a WebSocket (``WireOutbox``).
    case webSocket
    /// An SDK connection over long polling (``LongPollOutbox``).
    case longPoll

    /// The metrics label.
    var label: String {
        switch self {
        case .sse: "sse"
        case .webSocket: "websocket"
        case .longPoll: "long_poll"
        }
    }
}
