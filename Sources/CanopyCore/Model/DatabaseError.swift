/// The one error type Canopy throws and passes to completion and cancel blocks.
///
/// Every error carries a ``code`` to switch on and a ``message`` that names the offending part
/// (the key, the path, the query argument). Codes are an extensible set: new ones may be added
/// without breaking code that switches over the existing ones with a `default` branch.
///
/// ```swift
/// do {
///     try await db.reference().child("users").setValue(["a.b": 1])
/// } catch let error as DatabaseError where error.code == .invalidKey {
///     print(error.message)
/// }
/// ```
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { self.name }

        /// A path string is not valid (empty segment rules, forbidden characters, too long).
        public static let invalidPath = Code("invalid_path")
        /// A key inside written data is not valid.
        public static let invalidKey = Code("invalid_key")
        /// A written value is not valid (type, NaN/Infinity, `.value`/`.sv` misuse, depth, size).
        public static let invalidValue = Code("invalid_value")
        /// A priority is not a string, finite number, server value or null.
        public static let invalidPriority = Code("invalid_priority")
        /// A query combines constraints that cannot go together.
        public static let invalidQuery = Code("invalid_query")
        /// A JSON text could not be parsed.
        public static let invalidJSON = Code("invalid_json")
        /// A write was refused by the database state (e.g. a priority on a missing location).
        public static let writeFailed = Code("write_failed")
        /// The database is closed.
        public static let closed = Code("closed")
        /// Reading or writing files failed.
        public static let ioError = Code("io_error")
        /// Files on disk are damaged.
        public static let corrupted = Code("corrupted")
        /// The database directory is in use by another process.
        public static let inUse = Code("in_use")
        /// An error thrown by user code (for example inside a transaction block).
        public static let userCodeFailed = Code("user_code_failed")
        /// An object was used against its rules: a transaction read after a write or used after
        /// its block returned, a batch committed twice, a reference from another database.
        public static let invalidOperation = Code("invalid_operation")
        /// A write issued by a trigger would have been more than the allowed number of triggers
        /// deep (see `Database.Configuration.maxTriggerDepth`); it was not applied.
        public static let triggerDepthExceeded = Code("trigger_depth_exceeded")
        /// A server refused the request: its security rules do not allow it (remote databases).
        public static let permissionDenied = Code("permission_denied")
        /// The data changed on the server before a transaction's write reached it (remote databases;
        /// the transaction retries on its own, so this reaches a caller only through lower-level APIs).
        public static let dataStale = Code("datastale")
        /// A transaction gave up after the data changed on the server on each of its attempts.
        public static let maxRetries = Code("max_retries")
        /// The client is not connected to its server and could not answer from its cache.
        public static let disconnected = Code("disconnected")
        /// This node does not lead the namespace (cluster mode): another node's lease holds it, or
        /// this node's lease was taken over; nothing of the refused operation was committed.
        public static let notLeader = Code("not_leader")
        /// The cluster's PostgreSQL cannot be reached or refused a statement (cluster mode); whether
        /// the operation took effect is named in the message.
        public static let clusterUnavailable = Code("cluster_unavailable")

        /// The code whose ``name`` is `name`, if it is one of these (a code that crossed a process
        /// boundary by name).
        package static func named(_ name: String) -> Code? {
            let all: [Code] = [
                .invalidPath, .invalidKey, .invalidValue, .invalidPriority, .invalidQuery, .invalidJSON, .writeFailed, .closed, .ioError,
                .corrupted, .inUse, .userCodeFailed, .invalidOperation, .triggerDepthExceeded, .permissionDenied, .dataStale, .maxRetries,
                .disconnected, .notLeader, .clusterUnavailable,
            ]
            return all.first { $0.name == name }
        }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }

    /// What every operation on a closed database fails with.
    package static var databaseClosed: DatabaseError { DatabaseError(.closed, "The database is closed.") }
}
