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
    final class Outcome {
        var snapshot: DataSnapshot?
        var error: (any Error)?
    }
    let outcome = Outcome()
    let done = DispatchSemaphore(value: 0)
    query.getData { error, snapshot in
        outcome.error = error
        outcome.snapshot = snapshot
        done.signal()
    }
    done.wait()
    if let error = outcome.error { throw error }
    guard let snapshot = outcome.snapshot else { throw BenchError("getData returned no snapshot") }
    return snapshot
}
