/// The server's hello, the first message on a connection: `{"t":"c","d":{"t":"h","d":{…}}}`.
package struct ServerHello: Sendable, Equatable {
    /// `ts`: the server's clock, integer milliseconds since the epoch (the client's
    /// `.info/serverTimeOffset` is this minus its own clock).
    package var timestamp: Int64
    /// `v`: the protocol version, `"5"`.
    package var version: String
    /// `h`: the host the server wants the client to use from now on (`""` when absent).
    package var host: String
    /// `s`: the session id, sent back as `ls` when the client reconnects.
    package var session: String
}
