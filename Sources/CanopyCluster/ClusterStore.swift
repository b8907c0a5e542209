public import CanopyCore
public import Logging
import NIOCore
import PostgresNIO

/// A cluster's state in PostgreSQL: its nodes, the leases and epochs of its namespaces, their
/// logs and checkpoints (the DocC article *Cluster*).
///
/// Every guarantee comes from PostgreSQL: a log append commits only under the namespace's current
/// epoch, a takeover waits for appends in flight, and `(namespace, seq)` is a primary key.
public final class ClusterStore: Sendable {
    public let configuration: ClusterConfiguration
    let client: PostgresClient
    let logger: Logger
    private let runner: Task<Void, Never>

    private init(configuration: ClusterConfiguration, client: PostgresClient, logger: Logger) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.runner = Task { await client.run() }
    }

    /// Connects to the cluster's PostgreSQL and creates its tables if they are missing.
    ///
    /// - Throws: `DatabaseError` `.clusterUnavailable` naming what failed (the server's message
    ///   for a wrong password or database, the connection's error for a server that is down).
    public static func connect(_ configuration: ClusterConfiguration, logger: Logger) async throws(DatabaseError) -> ClusterStore {
        // One direct connection first: a wrong password or a server that is down fails here at
        // once, where the pool would retry in the background.
        let connection = try await Self.openConnection(configuration, logger: logger)
        do {
            try await connection.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(ClusterSchema.lockClass), 0)", logger: logger)
                for statement in ClusterSchema.statements { try await connection.query(statement, logger: logger) }
            }
        } catch {
            try? await connection.close()
            throw Self.failure(error, doing: "creating the cluster's tables", configuration)
        }
        try? await connection.close()
        let client = PostgresClient(configuration: Self.clientConfiguration(configuration), backgroundLogger: logger)
        return ClusterStore(configuration: configuration, client: client, logger: logger)
    }

    /// Stops the store's connections (statements in flight fail).
    public func close() async {
        self.runner.cancel()
        await self.runner.value
    }

    static func connectionConfiguration(_ configuration: ClusterConfiguration) -> PostgresConnection.Configuration {
        var result = PostgresConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
            database: configuration.database, tls: .disable)
        result.options.connectTimeout = .microseconds(ClusterNode.microseconds(configuration.connectTimeout))
        return result
    }

    static func clientConfiguration(_ configuration: ClusterConfiguration) -> PostgresClient.Configuration {
        var result = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username, password: configuration.password,
            database: configuration.database, tls: .disable)
        result.options.connectTimeout = .microseconds(ClusterNode.microseconds(configuration.connectTimeout))
        return result
    }

    /// A connection of its own (a node's session, which holds its advisory lock).
    static func openConnection(_ configuration: ClusterConfiguration, logger: Logger) async throws(DatabaseError) -> PostgresConnection {
        do {
            return try await PostgresConnection.connect(configuration: Self.connectionConfiguration(configuration), id: 0, logger: logger)
        } catch {
            throw Self.failure(error, doing: "connecting", configuration)
        }
    }

    /// `error` as a `DatabaseError` naming the server and what was being done, with PostgreSQL's
    /// own message where it sent one (never the password, which no message of its contains).
    static func failure(_ error: any Error, doing what: String, _ configuration: ClusterConfiguration) -> DatabaseError {
        if let error = error as? DatabaseError { return error }
        let place = "PostgreSQL at \(configuration.host):\(configuration.port)"
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                // 23505: a unique key refused a row (a log position or an address taken).
                if error.serverInfo?[.sqlState] == "23505" { return DatabaseError(.inUse, "\(place), \(what): \(message).") }
                return DatabaseError(.clusterUnavailable, "\(place), \(what): \(message).")
            }
            if let underlying = error.underlying {
                return DatabaseError(.clusterUnavailable, "\(place), \(what): \(underlying).")
            }
            return DatabaseError(.clusterUnavailable, "\(place), \(what): \(error.code).")
        }
        if let error = error as? PostgresTransactionError {
            return Self.failure(
                error.closureError ?? error.commitError ?? error.beginError ?? error.rollbackError ?? error, doing: what, configuration)
        }
        return DatabaseError(.clusterUnavailable, "\(place), \(what): \(error).")
    }

    /// Runs `query` on a pooled connection, its errors as `DatabaseError`s.
    @discardableResult
    ///
    /// A statement that has not finished after ``statementDeadline`` fails with
    /// `.clusterUnavailable` (a PostgreSQL cut off by the network never answers).
    func run(_ query: PostgresQuery, doing what: String) async throws(DatabaseError) -> [PostgresRow] {
        let (client, logger, configuration) = (self.client, self.logger, self.configuration)
        return try await withDeadline(ContinuousClock.now + Self.statementDeadline, doing: what) { () async throws(DatabaseError) in
            do {
                var rows: [PostgresRow] = []
                for try await row in try await client.query(query, logger: logger) { rows.append(row) }
                return rows
            } catch {
                throw Self.failure(error, doing: what, configuration)
            }
        }
    }

    /// The longest a statement may take (a namespace's checkpoint part is at most 4 MB).
    static let statementDeadline = Duration.seconds(30)
}
