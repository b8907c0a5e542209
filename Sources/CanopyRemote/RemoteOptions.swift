import Canopy
import Logging

/// What a remote database's sync needs of its configuration.
struct RemoteOptions: Sendable {
    var authToken: String?
    var authTokenProvider: (@Sendable () async throws -> String?)?
    var persistencePath: String?
    var minimumRetryDelay: Duration
    var maximumRetryDelay: Duration
    var requestTimeout: Duration
    var acknowledgementTimeout: Duration?
    var syncPolicy: SyncPolicy
    var logger: Logger

    init(_ configuration: Database.Configuration) {
        self.authToken = configuration.authToken
        self.authTokenProvider = configuration.authTokenProvider
        self.persistencePath = configuration.persistencePath
        self.minimumRetryDelay = max(configuration.minimumRetryDelay, .milliseconds(1))
        self.maximumRetryDelay = max(configuration.maximumRetryDelay, self.minimumRetryDelay)
        self.requestTimeout = configuration.requestTimeout
        self.acknowledgementTimeout = configuration.acknowledgementTimeout
        self.syncPolicy = configuration.syncPolicy
        var logger = configuration.logger
        logger[metadataKey: "component"] = "remote"
        self.logger = logger
    }
}
