import CanopyRemote
import CanopyServer
import Foundation
import Testing

/// The SDKs' emulator token (`connectDatabaseEmulator(db, host, port, {mockUserToken: {sub}})`:
/// unsigned, `iat: 0`, `exp: 3600`) on a server started with `--allow-unsigned-tokens`, end to
/// end: it signs its user in for as long as the connection or stream lasts, over REST (`?auth=`,
/// event streams included) and over a WebSocket (`auth`), and rules see its `sub` as `auth.uid`.
@Suite("The emulator's mockUserToken, end to end")
struct EmulatorTokenTests {
    static let rules = #"{"rules": {"users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid"}}}}"#

    static func server() -> CanopyServer {
        makeServer {
            $0.allowUnsignedTokens = true
            $0.rules = Self.rules
        }
    }

    @Test("REST: the token signs alice in (auth.uid in rules), and her event stream is not revoked for its 1970 exp")
    func rest() async throws {
        try await withLiveServer(Self.server()) { (port: Int) async throws in
            let alice = sdkMockUserToken(sub: "alice")
            let reply = try await StreamTests.request(port, "PUT", "/users/alice.json?auth=\(alice)", #"{"n": 1}"#)
            #expect(reply.status == 200, "\(reply)")
            #expect(try await StreamTests.request(port, "PUT", "/users/bob.json?auth=\(alice)", #"{"n": 1}"#).status == 401)
            #expect(try await StreamTests.request(port, "GET", "/users/alice.json?auth=\(alice)").body == #"{"n":1}"#)
            #expect(try await StreamTests.request(port, "GET", "/users/alice.json").status == 401, "anonymous: auth.uid is not alice")

            try await StreamTests.expectAliceStreamFollowsHerWrites(port, token: alice)
        }
    }

    @Test("WebSocket: Database(url:) signed in with the token writes and listens as alice, and stays signed in")
    func webSocket() async throws {
        try await withLiveServer(Self.server()) { (port: Int) async throws in
            var configuration = Database.Configuration()
            configuration.authToken = sdkMockUserToken(sub: "alice")
            let db = try Database(url: "http://127.0.0.1:\(port)?ns=default", configuration: configuration)
            defer { db.close() }
            let alice = db.reference(withPath: "users/alice")
            try await alice.setValue(["n": 1])
            // The rules see auth.uid == "alice": bob's data stays out of reach.
            await #expect(throws: DatabaseError.self) { try await db.reference(withPath: "users/bob").setValue(["n": 1]) }
            let (values, seen) = AsyncStream<Int>.makeStream()
            let handle = alice.child("n").observe(.value) { snapshot in
                if let n = snapshot.value as? Int { seen.yield(n) }
            }
            defer { alice.child("n").removeObserver(withHandle: handle) }
            try await alice.child("n").setValue(2)
            // The listen was not revoked (as it would be when the token counted as expired): the
            // server's answer to it and the acknowledged write both show.
            try await within(30, "alice's listen to show n = 2") {
                for await n in values where n == 2 { return }
            }
            #expect(try await db.reference(withPath: "users/alice").getData().value as? [String: Int] == ["n": 2])
        }
    }
}
