import Canopy
import CanopyCore
import HTTPTypes

extension Database {
    /// Runs `body` on the loop and returns its result.
    func loop<T: Sendable>(_ body: @escaping @Sendable (LoopAccess) -> T) async throws(RESTError) -> T {
        let result: T? = await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let accepted = self.onLoop { access in continuation.resume(returning: body(access)) }
            if !accepted { continuation.resume(returning: nil) }
        }
        guard let result else { throw RESTError(.serviceUnavailable, "The database is closed.") }
        return result
    }

    /// Decides on the loop (reads and the write are one atomic step), applies the write, and
    /// returns once it is durable.
    func apply<T: Sendable>(_ decide: @escaping @Sendable (LoopAccess) -> WriteDecision<T>) async throws(RESTError) -> T {
        let result: Result<T, RESTError> = await withCheckedContinuation { continuation in
            let accepted = self.onLoop { access in
                switch decide(access) {
                case .refuse(let error, let body):
                    var error = error
                    if let body { error.body = body }
                    continuation.resume(returning: .failure(error))
                case .write(let write, let then):
                    let rendezvous = WriteRendezvous<T>(continuation)
                    // The response shows what this write left, before any trigger it fires writes.
                    access.apply(write, completion: { error in rendezvous.complete(error) }, applied: { rendezvous.setValue(then(access)) })
                }
            }
            if !accepted { continuation.resume(returning: .failure(RESTError(.serviceUnavailable, "The database is closed."))) }
        }
        return try result.get()
    }
}
