import ArgumentParser
import CanopyCore

/// A failure the tool reports as one line on stderr (`canopy: <message>`) and an exit code.
struct CLIError: Error, CustomStringConvertible {
    /// The documented exit codes.
    enum Exit: Int32 {
        /// A runtime failure: the database is in use, damaged or unreadable, a write failed, the
        /// server refused the request.
        case failure = 1
        /// A usage error (EX_USAGE): bad arguments, path, JSON value or query; nothing was touched.
        case usage = 64
        /// The server could not be reached (EX_UNAVAILABLE).
        case unavailable = 69
    }

    var message: String
    var exit: Exit

    var description: String { self.message }

    init(message: String, exit: Exit) {
        self.message = message
        self.exit = exit
    }

    static func usage(_ message: String) -> CLIError { CLIError(message: message, exit: .usage) }
    static func failure(_ message: String) -> CLIError { CLIError(message: message, exit: .failure) }
    static func unavailable(_ message: String) -> CLIError { CLIError(message: message, exit: .unavailable) }

    /// A library error: invalid input is a usage error, anything else a runtime failure.
    init(_ error: DatabaseError) {
        switch error.code {
        case .invalidPath, .invalidKey, .invalidValue, .invalidPriority, .invalidQuery, .invalidJSON:
            self.init(message: error.message, exit: .usage)
        case .inUse:
            self.init(message: error.message + " (while canopy serve holds it, use --url)", exit: .failure)
        case .clusterUnavailable:
            self.init(message: error.message, exit: .unavailable)
        case .corrupted:
            self.init(message: error.message + " (canopy repair can cut the journal at the damage, keeping a backup)", exit: .failure)
        default:
            self.init(message: error.message, exit: .failure)
        }
    }

    /// Any error the commands meet, as a `CLIError`.
    static func from(_ error: any Error) -> CLIError {
        if let error = error as? CLIError { return error }
        if let error = error as? DatabaseError { return CLIError(error) }
        return .failure("\(error)")
    }
}
