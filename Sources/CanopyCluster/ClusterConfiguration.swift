public import CanopyCore
import Foundation

/// Where a cluster's PostgreSQL is and how long a node's lease lasts.
///
/// The password never appears in ``description`` or in any error: it comes from a file
/// (`--cluster-password-file`), from the URL, or from `PGPASSWORD`, in that order.
public struct ClusterConfiguration: Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// How long a node's lease lasts after its last heartbeat; heartbeats go every third of it.
    public var lease: Duration

    public init(host: String, port: Int = 5432, username: String, password: String?, database: String, lease: Duration = .seconds(3)) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.lease = lease
    }

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (or `postgresql://`).
    ///
    /// - Parameters:
    ///   - url: The cluster's URL.
    ///   - password: A password read from a file; it wins over the URL's and `PGPASSWORD`.
    ///   - environment: Where `PGPASSWORD` is looked up (the process's environment by default).
    /// - Throws: `DatabaseError` `.invalidValue` naming the part of the URL that is wrong (never
    ///   the password).
    public init(
        url: String, password: String? = nil, environment: [String: String]? = nil
    ) throws(DatabaseError) {
        guard let components = URLComponents(string: url), let scheme = components.scheme,
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw DatabaseError(.invalidValue, "The cluster URL must look like postgres://USER@HOST:PORT/DATABASE.")
        }
        guard let host = components.host, !host.isEmpty else {
            throw DatabaseError(.invalidValue, "The cluster URL names no host (postgres://USER@HOST:PORT/DATABASE).")
        }
        guard let user = components.user, !user.isEmpty else {
            throw DatabaseError(.invalidValue, "The cluster URL names no user (postgres://USER@HOST:PORT/DATABASE).")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw DatabaseError(.invalidValue, "The cluster URL names no database (postgres://USER@HOST:PORT/DATABASE).")
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw DatabaseError(.invalidValue, "The cluster URL's port must be 1 to 65535.")
        }
        self.init(
            host: host, port: components.port ?? 5432, username: user,
            password: password ?? components.password ?? (environment ?? ProcessInfo.processInfo.environment)["PGPASSWORD"],
            database: database)
    }

    /// The URL without its password.
    public var description: String { "postgres://\(self.username)@\(self.host):\(self.port)/\(self.database)" }
}
