import CanopyCore
import CanopyServer
import Foundation
import JWTKit
import Testing

/// Rules with signed user tokens, end to end over REST and event streams: `auth` comes from the
/// token, server values are resolved before the rules see `newData` (the seed example's
/// `last_updated == now`), and a user's stream follows only what the rules let it read.
@Suite("Rules with user tokens over REST")
struct RulesUserTokenTests {
    static let secret = "canopy-test-secret-of-at-least-32-bytes"

    static let rules = """
        {
          "rules": {
            "cities": {
              ".read": true,
              "$id": {
                ".write": "auth != null",
                ".validate": "newData.hasChildren(['name', 'country']) && newData.parent().parent().child('countries/' + newData.child('country').val() + '/last_updated').val() == now"
              }
            },
            "countries": {"$country": {"last_updated": {".write": "auth != null", ".validate": "newData.isNumber()"}}},
            "users": {"$uid": {".read": "auth.uid === $uid", ".write": "auth.uid === $uid && auth.token.email_verified === true"}}
          }
        }
        """

    static func token(_ uid: String, verified: Bool = true) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: Self.secret), digestAlgorithm: .sha256)
        let now = Int(Date().timeIntervalSince1970)
        return try await keys.sign(UserClaims(sub: uid, exp: now + 3600, iat: now, email_verified: verified))
    }

    static func server() -> CanopyServer {
        makeServer {
            $0.authToken = "s3cret"
            $0.jwtSecret = Array(Self.secret.utf8)
            $0.rules = Self.rules
        }
    }

    @Test("the seed example through the server: the city needs its country stamped with the server's time in the same update")
    func seedExample() async throws {
        try await withLiveServer(Self.server()) { (port: Int) async throws in
            let alice = try await Self.token("alice")
            let city = #"{"name": "Lyon", "country": "fr"}"#
            // Signed out, or the city alone, or a stamp that is not the server's time: refused.
            #expect(
                try await StreamTests.request(
                    port, "PATCH", "/.json", #"{"cities/lyon": \#(city), "countries/fr/last_updated": {".sv": "timestamp"}}"#
                ).status == 401)
            #expect(try await StreamTests.request(port, "PUT", "/cities/lyon.json?auth=\(alice)", city).status == 401)
            let stale = #"{"cities/lyon": \#(city), "countries/fr/last_updated": 1}"#
            #expect(try await StreamTests.request(port, "PATCH", "/.json?auth=\(alice)", stale).status == 401)
            #expect(try await StreamTests.request(port, "GET", "/cities.json").body == "null", "refused writes changed nothing")
            // With the stamp, in one update: allowed, and stored with the time the rules saw.
            let stamped = #"{"cities/lyon": \#(city), "countries/fr/last_updated": {".sv": "timestamp"}}"#
            let reply = try await StreamTests.request(port, "PATCH", "/.json", stamped, headers: [("Authorization", "Bearer \(alice)")])
            #expect(reply.status == 200, "\(reply)")
            let stored = try json(try await StreamTests.request(port, "GET", "/countries/fr/last_updated.json?auth=s3cret").body)
            guard case .int(let at) = stored else { throw TestFailure("no stamp: \(stored)") }
            #expect(abs(at - Int64(Date().timeIntervalSince1970 * 1000)) < 60_000)
        }
    }

    @Test("auth.uid and token claims decide; a user's stream sees its own data; a forged token is 401")
    func perUser() async throws {
        try await withLiveServer(Self.server()) { (port: Int) async throws in
            let alice = try await Self.token("alice")
            let unverified = try await Self.token("bob", verified: false)
            #expect(try await StreamTests.request(port, "PUT", "/users/alice.json?auth=\(alice)", #"{"n": 1}"#).status == 200)
            #expect(try await StreamTests.request(port, "PUT", "/users/bob.json?auth=\(alice)", #"{"n": 1}"#).status == 401)
            #expect(try await StreamTests.request(port, "PUT", "/users/bob.json?auth=\(unverified)", #"{"n": 1}"#).status == 401)
            #expect(try await StreamTests.request(port, "GET", "/users/alice.json?access_token=\(alice)").body == #"{"n":1}"#)
            #expect(try await StreamTests.request(port, "GET", "/users/alice.json?auth=\(unverified)").status == 401)
            let parts = alice.split(separator: ".")
            let forged = "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
            let refused = try await StreamTests.request(port, "GET", "/users/alice.json?auth=\(forged)")
            #expect(refused.status == 401 && refused.body.contains("signature"), "\(refused)")

            try await StreamTests.expectAliceStreamFollowsHerWrites(port, token: alice)
            let other = try await EventStreamClient.open(port: port, "/users/alice.json?auth=\(unverified)")
            #expect(other.head.status == 401)
            await other.connection.close()
        }
    }
}

struct UserClaims: JWTPayload {
    var sub: String
    var exp: Int
    var iat: Int
    var email_verified: Bool

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
