public import Logging

/// How a ``CanopyServer`` listens, authenticates and streams.
public struct ServerConfiguration: Sendable {
    /// The address to bind; loopback unless ``allowInsecure`` or an ``authToken`` is set.
    public var host: String = "127.0.0.1"
    /// The port to bind; `0` picks a free one (see ``CanopyServer/listeningPort()``).
    public var port: Int = 9000
    /// When set, every request must carry `Authorization: Bearer <token>` or `auth=<token>`.
    public var authToken: String?
    /// Allows binding a non-loopback address without an ``authToken``.
    public var allowInsecure: Bool = false
    /// The secret that user tokens signed with HS256 are verified with (`--jwt-secret-file`:
    /// the file's bytes, without one trailing newline); at least 32 bytes.
    public var jwtSecret: [UInt8]?
    /// The public keys that user tokens signed with RS256 or ES256 are verified with
    /// (`--jwt-keys`): the text of PEM public keys and X.509 certificates (one or more blocks),
    /// or a JWKS document (`{"keys": [...]}`).
    public var jwtKeys: String?
    /// Accepts user tokens without checking their signature (`alg: none`, or signed with any
    /// key), as the Firebase emulator does; their claims are still checked. For development
    /// only: anyone can then sign in as anyone.
    public var allowUnsignedTokens: Bool = false
    /// When set, a user token's `aud` claim (a string, or an array of them) must name it: for
    /// Firebase Auth ID tokens, the project id.
    public var jwtAudience: String?
    /// When set, a user token's `iss` claim must equal it: for Firebase Auth ID tokens,
    /// `https://securetoken.google.com/PROJECT`.
    public var jwtIssuer: String?
    /// The period of `keep-alive` events on streams (also the worst-case latency of a
    /// firebase-admin `ListenerRegistration.close()`).
    public var keepAliveInterval: Duration = .seconds(15)
    /// How long an SDK (WebSocket) connection may go without sending anything before the server
    /// pings it; if a second interval passes with nothing, not even the pong, the connection is
    /// closed as gone (and its onDisconnect work runs). The SDKs' own keep-alive, a `0` after 45 s
    /// of silence, only covers connections that receive nothing either.
    public var webSocketPingInterval: Duration = .seconds(30)
    /// How long a long-poll SDK session (a browser that could not open a WebSocket) may go
    /// without a request before it is closed as gone (and its onDisconnect work runs). Its polls
    /// are held for a third of this at most (20 s at most), so a client that is still there
    /// always polls again in time.
    public var longPollTimeout: Duration = .seconds(60)
    /// The largest request body accepted, in bytes (larger ones get 413).
    public var maxBodyBytes: Int = 256 << 20
    /// The most bytes of live events a stream (or an SDK connection) may have waiting for a
    /// client that does not keep up; past it the client is disconnected. A single event alone is
    /// never too many, and a listen's initial value and a read's answer are not counted: they go
    /// out as the client reads them, however large (up to ``maxResponseBytes``), and the events
    /// that come meanwhile wait behind them, counted here.
    public var streamBufferBytes: Int = 4 << 20
    /// How long a client may take nothing of what was sent to it (an event stream, an SDK
    /// connection) before it is disconnected as one that does not read: cut off after one to two
    /// of these with no progress. A client that keeps reading, however slowly and however large
    /// the value, is not affected.
    public var slowClientTimeout: Duration = .seconds(30)
    /// The largest single answer, in bytes of JSON: a read, or the initial value of a listen or
    /// stream (Firebase's limit, 256 MB). A larger one is refused with an error that names it.
    public var maxResponseBytes: Int = 256 << 20
    /// The shortest time between two writes to one stream's connection while events keep
    /// coming: a busy stream's events are written in batches at most this often (an idle stream
    /// gets its next event at once). The same holds for the pushes to an SDK (WebSocket)
    /// connection; answers to its requests are not held back. Bounds the cost of fan-out at high
    /// write rates; adds at most this much latency. `.zero` writes every event as it comes.
    public var streamCoalescing: Duration = .milliseconds(10)
    /// How long a connection may go without receiving anything while it has no request in
    /// progress (between requests, or before the first one), and the longest a request head may
    /// take to arrive in full (a head dribbled byte by byte does not reset it). Past it the
    /// connection is closed. Streams are not affected: a stream is a request in progress, however
    /// quiet. `nil` keeps idle connections open forever.
    public var idleTimeout: Duration? = .seconds(60)
    /// The longest a request body may take to arrive, from the end of its head; a client still
    /// sending past it (a body much slower than its `Content-Length`) is disconnected. `nil` waits
    /// forever.
    public var requestBodyTimeout: Duration? = .seconds(120)
    /// A rules document (Firebase's `database.rules.json`) that every namespace starts with,
    /// replacing the rules it kept. Without it a namespace keeps the rules last set through
    /// `PUT /.settings/rules.json`; one that has none starts locked on a guarded server (one with
    /// an ``authToken``, user tokens or these rules) and open on a development server.
    public var rules: String?
    /// The namespace of requests without `ns=`.
    public var defaultNamespace: String = "default"
    /// The server's logger; request lines are logged at `.info`, so the default level
    /// (`.warning`) keeps it quiet.
    public var logger: Logger = {
        var logger = Logger(label: "canopy.server")
        logger.logLevel = .warning
        return logger
    }()

    public init() {}

    /// Whether the server verifies user tokens (JWTs): a secret, keys or unsigned tokens are
    /// configured.
    public var verifiesUserTokens: Bool { self.jwtSecret != nil || self.jwtKeys != nil || self.allowUnsignedTokens }

    /// Whether `host` names a loopback address (`127.0.0.0/8`, `::1`, `localhost`).
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" || h == "[::1]" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// What is wrong with a rules document, naming the line, column and expression; `nil` when
    /// it compiles.
    public static func rulesProblem(_ source: String) -> String? {
        do {
            _ = try NamespaceRules(source: source)
            return nil
        } catch {
            return error.report
        }
    }

    /// How the server guards its data, for its start-up line.
    public var accessSummary: String {
        var parts: [String] = []
        if self.authToken != nil { parts.append("admin token") }
        if self.jwtSecret != nil || self.jwtKeys != nil { parts.append("user tokens") }
        if self.allowUnsignedTokens { parts.append("unsigned user tokens (development only)") }
        if self.rules != nil { parts.append("rules from --rules") }
        guard !parts.isEmpty else {
            return "development mode: no credentials or rules configured; namespaces without rules are open to anyone who can connect"
        }
        return parts.joined(separator: ", ") + "; namespaces without rules are locked"
    }

    /// Checks the combination of options; the message says what to change.
    public func validate() throws(ServerError) {
        if self.authToken == nil && !self.allowInsecure && !Self.isLoopback(self.host) {
            throw ServerError(
                "Refusing to serve \(self.host) without --auth-token: anyone who can reach it could read and write every database. Pass --auth-token TOKEN, or --insecure to serve it open."
            )
        }
        if let token = self.authToken, token.isEmpty { throw ServerError("The auth token must not be empty.") }
        if !(0...65_535).contains(self.port) { throw ServerError("The port must be between 0 and 65535.") }
        if self.maxBodyBytes <= 0 || self.streamBufferBytes <= 0 || self.maxResponseBytes <= 0 {
            throw ServerError("Size limits must be positive.")
        }
        if self.slowClientTimeout <= .zero { throw ServerError("The slow client timeout must be positive.") }
        if self.keepAliveInterval <= .zero { throw ServerError("The keep-alive interval must be positive.") }
        if self.webSocketPingInterval <= .zero { throw ServerError("The WebSocket ping interval must be positive.") }
        if self.longPollTimeout <= .zero { throw ServerError("The long-poll timeout must be positive.") }
        if let timeout = self.idleTimeout, timeout <= .zero { throw ServerError("The idle timeout must be positive.") }
        if let timeout = self.requestBodyTimeout, timeout <= .zero { throw ServerError("The request body timeout must be positive.") }
        if self.streamCoalescing < .zero || self.streamCoalescing > .seconds(1) {
            throw ServerError("The stream coalescing interval must be between 0 and 1 second.")
        }
        if let problem = self.rules.flatMap(Self.rulesProblem) { throw ServerError(problem) }
        if !NamespaceStore.isValidName(self.defaultNamespace) {
            throw ServerError("Invalid default namespace \"\(self.defaultNamespace)\".")
        }
        // The keys are read here so that a bad key file stops the server before it starts.
        _ = try TokenKeys(configuration: self)
    }
}
