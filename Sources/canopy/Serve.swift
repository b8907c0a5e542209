import ArgumentParser
import Canopy
import CanopyCluster
import CanopyServer
import Foundation
import Logging

/// `canopy serve`: the Firebase Realtime Database REST API, with streaming.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the databases over HTTP with the Firebase Realtime Database REST protocol and streaming.",
        discussion: """
            Each namespace (?ns=NAME) is its own database in the data directory, created on first \
            use; requests without ns use the default namespace. Stops gracefully on Ctrl-C or SIGTERM.

            Example:
              canopy serve --db ./canopy-data --port 9000
              curl -X PUT 'http://127.0.0.1:9000/users/ada.json' -d '{"name": "Ada"}'
              curl 'http://127.0.0.1:9000/users.json?orderBy="$key"&limitToFirst=1'
              curl -N -H 'Accept: text/event-stream' 'http://127.0.0.1:9000/users.json'

            firebase-admin (Python): initialize_app(options={'databaseURL': 'http://127.0.0.1:9000?ns=default'})
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The address to bind (loopback by default).")
    var host = "127.0.0.1"

    @Option(help: "The port to bind (0 picks a free one).")
    var port = 9000

    @Option(
        name: .customLong("auth-token"),
        help: ArgumentHelp("Require 'Authorization: Bearer TOKEN' (or auth=TOKEN) on every request.", valueName: "TOKEN"))
    var authToken: String?

    @Option(
        name: .customLong("auth-token-file"),
        help: ArgumentHelp(
            "Read the admin token from FILE (one trailing newline ignored), so that it is not on the command line.", valueName: "FILE"))
    var authTokenFile: String?

    @Option(
        name: .customLong("rules"),
        help: ArgumentHelp(
            "A rules file (Firebase's database.rules.json) that every namespace starts with, replacing the rules it kept.",
            valueName: "FILE"))
    var rulesFile: String?

    @Flag(help: "Allow a non-loopback --host without --auth-token.")
    var insecure = false

    @Option(
        name: .customLong("jwt-secret-file"),
        help: ArgumentHelp(
            "Verify HS256-signed user tokens (JWTs) with the secret in FILE (at least 32 bytes; one trailing newline ignored).",
            valueName: "FILE"))
    var jwtSecretFile: String?

    @Option(
        name: .customLong("jwt-keys"),
        help: ArgumentHelp(
            "Verify RS256/ES256-signed user tokens (JWTs) with the public keys in FILE: PEM public keys or certificates, or a JWKS document.",
            valueName: "FILE"))
    var jwtKeysFile: String?

    @Option(
        name: .customLong("jwt-audience"),
        help: ArgumentHelp("Require user tokens' aud claim to name AUD (for Firebase Auth ID tokens: the project id).", valueName: "AUD"))
    var jwtAudience: String?

    @Option(
        name: .customLong("jwt-issuer"),
        help: ArgumentHelp(
            "Require user tokens' iss claim to be ISS (for Firebase Auth ID tokens: https://securetoken.google.com/PROJECT).",
            valueName: "ISS"))
    var jwtIssuer: String?

    @Flag(
        name: .customLong("allow-unsigned-tokens"),
        help: "Accept user tokens without checking their signature, as the Firebase emulator does (development only).")
    var allowUnsignedTokens = false

    @Option(name: .customLong("keep-alive"), help: ArgumentHelp("Seconds between keep-alive events on streams.", valueName: "SECONDS"))
    var keepAlive: Double = 15

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Seconds before closing a connection with no request in progress, or whose request head has not arrived in full (0: never). Streams are not affected.",
            valueName: "SECONDS"))
    var idleTimeout: Double = 60

    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp("Seconds a request body may take to arrive before the connection is closed (0: no limit).", valueName: "SECONDS")
    )
    var bodyTimeout: Double = 120

    @Option(
        name: .customLong("slow-client-timeout"),
        help: ArgumentHelp(
            "Seconds a client may take nothing of what is sent to it (a stream, an SDK connection) before it is disconnected.",
            valueName: "SECONDS"))
    var slowClientTimeout: Double = 30

    @Option(
        name: .customLong("max-namespaces"),
        help: ArgumentHelp(
            "The most namespaces (ns=NAME, one database each) served at once; a request for one more gets 403.", valueName: "N"))
    var maxNamespaces: Int = 100

    @Option(
        name: .customLong("cluster"),
        help: ArgumentHelp(
            "Serve as a node of the cluster kept in this PostgreSQL (the DocC article Cluster); --db is then not used.",
            valueName: "postgres://USER@HOST:PORT/DB"))
    var cluster: String?

    @Option(
        name: .customLong("cluster-password-file"),
        help: ArgumentHelp("A file holding the cluster's PostgreSQL password (else the URL's or PGPASSWORD).", valueName: "file"))
    var clusterPasswordFile: String?

    @Option(
        name: .customLong("advertise"),
        help: ArgumentHelp("With --cluster: how clients reach this node, where other nodes redirect them.", valueName: "http://HOST:PORT"))
    var advertise: String?

    @Option(
        name: .customLong("max-led-namespaces"),
        help: ArgumentHelp("With --cluster: the most namespaces this node leads at once.", valueName: "N"))
    var maxLedNamespaces: Int = 100

    @Flag(
        name: .customLong("replicas"),
        help:
            "With --cluster: serve the namespaces other nodes lead as their follower (reads and listens here, writes forwarded to the leader) instead of redirecting their clients."
    )
    var replicas = false

    @Option(
        name: .customLong("max-replicated-namespaces"),
        help: ArgumentHelp(
            "With --replicas: the most namespaces this node follows at once (past it, their clients are redirected).", valueName: "N"))
    var maxReplicatedNamespaces: Int = 100

    @Option(
        name: .customLong("cluster-lease"),
        help: ArgumentHelp(
            "With --cluster: seconds this node's lease lasts without a heartbeat (1 to 60); a longer one tolerates a busier node and makes failover after a lost machine slower.",
            valueName: "SECONDS"))
    var clusterLease: Double = 3

    @Option(name: .customLong("namespace"), help: ArgumentHelp("The namespace of requests without ns=.", valueName: "NAME"))
    var defaultNamespace = "default"

    @Option(
        name: .customLong("sync"),
        help: ArgumentHelp(
            "When a write is acknowledged: always (fsync before answering, the default), periodic (fsync every second), never (leave it to the OS).",
            valueName: "POLICY"))
    var sync: String = "always"

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("trace, debug, info (one line per request), notice, warning (default), error, critical.", valueName: "LEVEL"))
    var logLevel: String = "warning"

    func validate() throws {
        guard Logger.Level(rawValue: self.logLevel) != nil else { throw ValidationError("Unknown --log-level \(self.logLevel).") }
        guard self.keepAlive > 0 else { throw ValidationError("--keep-alive must be positive.") }
        guard self.idleTimeout >= 0 && self.bodyTimeout >= 0 else {
            throw ValidationError("--idle-timeout and --body-timeout must not be negative.")
        }
        guard self.slowClientTimeout > 0 else { throw ValidationError("--slow-client-timeout must be positive.") }
        guard self.maxNamespaces >= 1 else { throw ValidationError("--max-namespaces must be at least 1.") }
        guard self.authToken == nil || self.authTokenFile == nil else {
            throw ValidationError("Use either --auth-token or --auth-token-file.")
        }
        guard self.cluster == nil || self.advertise != nil else {
            throw ValidationError("--cluster needs --advertise http://HOST:PORT: how clients reach this node.")
        }
        guard (1...60).contains(self.clusterLease) else { throw ValidationError("--cluster-lease must be between 1 and 60 seconds.") }
        guard self.cluster != nil || (self.advertise == nil && self.clusterPasswordFile == nil && self.clusterLease == 3 && !self.replicas)
        else {
            throw ValidationError("--advertise, --cluster-password-file, --cluster-lease and --replicas go with --cluster.")
        }
        guard self.maxReplicatedNamespaces >= 1 else { throw ValidationError("--max-replicated-namespaces must be at least 1.") }
        if let advertise = self.advertise {
            guard let url = URL(string: advertise), url.scheme == "http" || url.scheme == "https", url.host != nil, url.port != nil,
                url.path.isEmpty || url.path == "/"
            else { throw ValidationError("--advertise must look like http://HOST:PORT.") }
        }
        guard self.maxLedNamespaces >= 1 else { throw ValidationError("--max-led-namespaces must be at least 1.") }
        guard self.syncPolicy != nil else { throw ValidationError("Unknown --sync \(self.sync): use always, periodic or never.") }
    }

    var syncPolicy: SyncPolicy? {
        switch self.sync {
        case "always": return .always
        case "periodic": return .periodic(.seconds(1))
        case "never": return .never
        default: return nil
        }
    }

    func run() async throws {
        var configuration = ServerConfiguration()
        configuration.host = self.host
        configuration.port = self.port
        configuration.authToken = self.authToken
        if let path = self.authTokenFile {
            let token = try readSecretOptionFile(path, option: "--auth-token-file")
            guard !token.isEmpty, let text = String(validating: token, as: UTF8.self) else {
                throw ValidationError("The admin token (--auth-token-file) is empty or not UTF-8 text.")
            }
            configuration.authToken = text
        }
        configuration.allowInsecure = self.insecure
        configuration.keepAliveInterval = .milliseconds(Int64(self.keepAlive * 1000))
        configuration.idleTimeout = self.idleTimeout > 0 ? .milliseconds(Int64(self.idleTimeout * 1000)) : nil
        configuration.requestBodyTimeout = self.bodyTimeout > 0 ? .milliseconds(Int64(self.bodyTimeout * 1000)) : nil
        configuration.slowClientTimeout = .milliseconds(Int64(self.slowClientTimeout * 1000))
        configuration.defaultNamespace = self.defaultNamespace
        if let file = self.rulesFile {
            guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("Can't read the rules file \(file).") }
            guard let text = String(validating: data, as: UTF8.self) else { throw ValidationError("The rules file \(file) is not UTF-8.") }
            if let problem = ServerConfiguration.rulesProblem(text) { throw ValidationError("\(file): \(problem)") }
            configuration.rules = text
        }
        if let path = self.jwtSecretFile {
            configuration.jwtSecret = try readSecretOptionFile(path, option: "--jwt-secret-file")
        }
        if let path = self.jwtKeysFile {
            configuration.jwtKeys = String(decoding: try readOptionFile(path, option: "--jwt-keys"), as: UTF8.self)
        }
        configuration.allowUnsignedTokens = self.allowUnsignedTokens
        configuration.jwtAudience = self.jwtAudience
        configuration.jwtIssuer = self.jwtIssuer
        var logger = Logger(label: "canopy.server")
        logger.logLevel = Logger.Level(rawValue: self.logLevel) ?? .warning
        configuration.logger = logger
        do {
            try configuration.validate()
        } catch {
            throw ValidationError(error.message)
        }
        var databaseConfiguration = Database.Configuration()
        databaseConfiguration.syncPolicy = self.syncPolicy ?? .always
        let membership = try await self.joinCluster(logger: logger)
        let store = NamespaceStore(
            directory: self.database.resolvedPath, configuration: databaseConfiguration,
            maxNamespaces: membership == nil ? self.maxNamespaces : self.maxLedNamespaces, cluster: membership)
        let server = CanopyServer(configuration: configuration, store: store)
        Task {
            if let port = await server.listeningPort() {
                // One line on stdout (flushed), for scripts that start the server on port 0.
                // The URL stays last on the line.
                let warning =
                    self.allowUnsignedTokens
                    ? "WARNING: --allow-unsigned-tokens: user tokens are accepted unsigned, anyone can sign in as anyone (development only); "
                    : ""
                let what =
                    membership.map { "node \($0.currentNode.id) of the cluster \($0.store.configuration)" } ?? self.database.resolvedPath
                let line = "canopy \(CanopyVersion.current): \(warning)serving \(what) on http://\(self.host):\(port)\n"
                FileHandle.standardOutput.write(Data(line.utf8))
                // How it is guarded, on stderr: the line above is what scripts read.
                FileHandle.standardError.write(Data("canopy: \(configuration.accessSummary)\n".utf8))
                FileHandle.standardError.write(Data("canopy: data browser at http://\(self.host):\(port)/_/\n".utf8))
            }
        }
        do {
            try await server.run()
        } catch {
            await membership?.leave()
            throw error
        }
        await membership?.leave()
    }

    /// With `--cluster`: connects to the cluster's PostgreSQL and registers this node.
    private func joinCluster(logger: Logger) async throws -> ClusterMembership? {
        guard let url = self.cluster, let advertise = self.advertise else { return nil }
        var cluster = try ClusterOptions.configuration(url: url, passwordFile: self.clusterPasswordFile)
        cluster.lease = .milliseconds(Int64((self.clusterLease * 1000).rounded()))
        do {
            return try await ClusterMembership.join(
                cluster, advertise: advertise, maxReplicated: self.replicas ? self.maxReplicatedNamespaces : nil,
                version: CanopyVersion.current,
                logger: logger)
        } catch {
            // Not CLIError(error): `.inUse` here is another node's address, not a locked directory.
            throw CLIError(message: error.message, exit: error.code == .clusterUnavailable ? .unavailable : .failure)
        }
    }

}
