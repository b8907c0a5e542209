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
}
