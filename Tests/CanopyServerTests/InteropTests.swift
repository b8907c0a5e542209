import CanopyServer
import Foundation
import Testing

/// The real firebase-admin (Python, from PyPI) against the server over loopback (see
/// ``PythonClient`` for how CI provides it, and when a missing client fails the test).
@Suite("firebase-admin interop")
struct InteropTests {
    @Test(
        "firebase-admin: get/set/update/push/delete, queries, shallow, ETags, concurrent transactions, listen()",
        .enabled(if: PythonClient.runnable, PythonClient.skipReason)
    )
    func firebaseAdmin() async throws {
        // A short keep-alive: firebase-admin's ListenerRegistration.close() returns on the next one.
        let server = makeServer { $0.keepAliveInterval = .seconds(1) }
        try await withLiveServer(server) { port in
            try await PythonClient.run(
                "firebase_admin_interop", ["http://127.0.0.1:\(port)?ns=interop"], expecting: "interop: all checks passed")
        }
    }
}
