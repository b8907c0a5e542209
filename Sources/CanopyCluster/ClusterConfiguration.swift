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
    /// How long opening a connection to PostgreSQL may take (the URL's `connect_timeout`).
    public var connectTimeout: Duration = Self.defaultConnectTimeout
    /// 5 s.
    public static let defaultConnectTimeout: Duration = .seconds(5)

    public init(host: String, port: Int = 5432, username: String, password: String?, database: String, lease: Duration = .seconds(3)) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.lease = lease
    }

    /// Reads `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMETERS]` (or `postgresql://`).
    ///
    /// Parameters, as libpq reads them: `connect_timeout=SECONDS` (a positive integer; 5 by
    /// default) and `sslmode=disable`. Connections to PostgreSQL are not encrypted, so any other
    /// `sslmode` is refused rather than ignored, as is any other parameter.
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
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("connect_timeout", let value):
                guard let seconds = value.flatMap({ Int($0) }), seconds > 0, seconds <= 3600 else {
                    throw DatabaseError(.invalidValue, "The cluster URL's connect_timeout must be a number of seconds from 1 to 3600.")
                }
                self.connectTimeout = .seconds(seconds)
            case ("sslmode", "disable"):
                break
            case ("sslmode", let value):
                throw DatabaseError(
                    .invalidValue,
                    "The cluster URL asks for sslmode=\(value ?? ""), but Canopy connects to PostgreSQL without TLS: reach it over a private network or a tunnel, and give sslmode=disable or no sslmode."
                )
            default:
                throw DatabaseError(
                    .invalidValue, "The cluster URL has a parameter Canopy does not know: \(item.name) (known: connect_timeout, sslmode).")
            }
        }
    }

    /// The URL without its password (with `connect_timeout` when it is not the default).
    public var description: String {
        let url = "postgres://\(self.username)@\(self.host):\(self.port)/\(self.database)"
        guard self.connectTimeout != Self.defaultConnectTimeout else { return url }
        return url + "?connect_timeout=\(self.connectTimeout.components.seconds)"
    }
}
