import Logging
import Synchronization

/// Every message logged through ``handler``, for tests that check what a database logs.
final class CapturedLog: Sendable {
    let messages = Mutex<[(Logger.Level, String)]>([])

    struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.metadata[key] }
            set { self.metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            self.log.messages.withLock { $0.append((event.level, "\(event.message)")) }
        }
    }

    var handler: Handler { Handler(log: self) }
}
