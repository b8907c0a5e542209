import Canopy
import CanopyCore

/// What a write job decides, on the loop: refuse (with a body), or apply a write and then read
/// the result.
enum WriteDecision<T: Sendable> {
    case refuse(RESTError, body: [UInt8]?)
    case write(WriteOperation, then: (LoopAccess) -> T)

    /// Refuses with the error's own `{"error": …}` body.
    static func refuse(_ error: RESTError) -> WriteDecision { .refuse(error, body: nil) }
}
