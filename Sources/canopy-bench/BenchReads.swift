import Canopy
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Thrown when a read fails or a scenario cannot run.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Reads `query` once and waits for the snapshot. Reads are queued behind every write this thread
/// issued before, so when this returns all of them are applied.
func blockingGetData(_ query: DatabaseQuery) throws -> DataSnapshot {
    try blockingRead("snapshot", query.getData(completion:))
}

/// Starts a read with `read`, passing it a completion, and waits for it: the result, or the
/// error the completion reports (`what` names the result if neither comes).
func blockingRead<Result>(_ what: String, _ read: (@escaping ((any Error)?, Result?) -> Void) -> Void) throws -> Result {
    let outcome = ReadOutcome<Result>()
    let done = DispatchSemaphore(value: 0)
    read { error, result in
        outcome.error = error
        outcome.result = result
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
    guard let result = outcome.result else { throw BenchError("getData returned no \(what)") }
    return result
}

/// What a read's completion reported: written by the loop before the reader is signalled.
private final class ReadOutcome<Result>: @unchecked Sendable {
    var result: Result?
    var error: (any Error)?
}
