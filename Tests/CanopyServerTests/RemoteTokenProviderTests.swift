import CanopyRemote
import CanopyServer
import Foundation
import JWTKit
import Synchronization
import Testing

/// `Database(url:)` signing in with user tokens from a provider: asked before signing in, and again
/// when the server says the token expired; writes go on under the fresh token.
@Suite("Database(url:) with an auth token provider")
struct RemoteTokenProviderTests {
    static func token(_ uid: String, lifetime: Int) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: RulesUserTokenTests.secret), digestAlgorithm: .sha256)
        let now = Int(Date().timeIntervalSince1970)
        return try await keys.sign(UserClaims(sub: uid, exp: now + lifetime, iat: now, email_verified: true))
    }

    @Test("the provider's token signs in; when it expires the client signs in again with a fresh one")
    func refreshOnExpiry() async throws {
        try await withLiveServer(RulesUserTokenTests.server()) { (port: Int) async throws in
            let url = "http://127.0.0.1:\(port)?ns=tokens"
            // Only the administrator may have a namespace created on a guarded server.
            var admin = Database.Configuration()
            admin.authToken = "s3cret"
            let adminDB = try Database(url: url, configuration: admin)
            try await adminDB.reference(withPath: "cities/seed").setValue(["name": "Seed", "country": "x"])
            adminDB.close()

            let calls = Atomic<Int>(0)
            let (signIns, signedIn) = AsyncStream<Int>.makeStream()
            var configuration = Database.Configuration()
            configuration.minimumRetryDelay = .milliseconds(20)
            configuration.authTokenProvider = {
                // The first token lives 4 s; the next ones an hour.
                let call = calls.add(1, ordering: .relaxed).newValue
                signedIn.yield(call)
                return try await Self.token("alice", lifetime: call == 1 ? 4 : 3600)
            }
            let db = try Database(url: url, configuration: configuration)
            defer { db.close() }
            let alice = db.reference(withPath: "users/alice")
            try await alice.setValue(["n": 1])
            // Another user's data stays out of reach: the token is alice's.
            await #expect(throws: DatabaseError.self) { try await db.reference(withPath: "users/bob").setValue(["n": 1]) }
            try await within(30, "a second sign-in after the first token expired") {
                for await call in signIns where call == 2 { return }
            }
            try await alice.setValue(["n": 2])
            #expect(try await alice.getData().value as? [String: Int] == ["n": 2])
        }
    }
}
