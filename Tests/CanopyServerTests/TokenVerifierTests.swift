import CanopyCore
import CanopyRules
import Foundation
import JWTKit
import Testing

@testable import CanopyServer

/// User tokens: HS256, RS256 and ES256 keys from a secret, PEM and JWKS; claims; unsigned tokens;
/// the cache; key file mistakes. Tokens are signed by jwt-kit in the test.
@Suite("TokenVerifier")
struct TokenVerifierTests {
    static let secret = "a-test-secret-of-32-bytes-length"
    let clock = TokenTestClock()
    var now: Int { Int(self.clock.seconds) }

    func verifier(_ configure: (inout ServerConfiguration) -> Void) throws -> TokenVerifier {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let clock = self.clock
        return try TokenVerifier(configuration: configuration, clock: { clock.seconds })
    }

    func claims(sub: String? = "alice", expiresIn: Int? = 3600) -> TokenTestClaims {
        TokenTestClaims(sub: sub, exp: expiresIn.map { self.now + $0 }, iat: self.now - 10, name: "Alice")
    }

    func sign(_ claims: TokenTestClaims, with add: (JWTKeyCollection) async throws -> Void, kid: String? = nil) async throws -> String {
        let keys = JWTKeyCollection()
        try await add(keys)
        return try await keys.sign(claims, kid: kid.map { JWKIdentifier(string: $0) })
    }

    func hs256(_ claims: TokenTestClaims, secret: String = Self.secret) async throws -> String {
        try await self.sign(claims) { await $0.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256) }
    }

    func rs256(_ claims: TokenTestClaims, kid: String? = nil) async throws -> String {
        let key = try Insecure.RSA.PrivateKey(pem: keyFixture("jwt-rsa-private.pem"))
        return try await self.sign(claims, with: { await $0.add(rsa: key, digestAlgorithm: .sha256) }, kid: kid)
    }

    func es256(_ claims: TokenTestClaims, key: ES256PrivateKey, kid: String? = nil) async throws -> String {
        try await self.sign(claims, with: { await $0.add(ecdsa: key) }, kid: kid)
    }

    func expectRejected(_ verifier: TokenVerifier, _ token: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation)
        async
    {
        switch await verifier.verify(token) {
        case .success(let verified): Issue.record("accepted as \(verified.auth.variable)", sourceLocation: sourceLocation)
        case .failure(let rejection):
            #expect(rejection.message.contains(expected), "\(rejection.message)", sourceLocation: sourceLocation)
            for part in token.split(separator: ".") where part.count > 3 {
                #expect(!rejection.message.contains(part), "the message quotes the token", sourceLocation: sourceLocation)
            }
        }
    }

    func expectAccepted(
        _ verifier: TokenVerifier, _ token: String, uid: String = "alice", sourceLocation: SourceLocation = #_sourceLocation
    )
        async
    {
        switch await verifier.verify(token) {
        case .success(let verified): #expect(verified.auth.uid == uid, sourceLocation: sourceLocation)
        case .failure(let rejection): Issue.record("rejected: \(rejection.message)", sourceLocation: sourceLocation)
        }
    }

    @Test("HS256: the claims become auth (uid from sub, token the claims)")
    func hs256Claims() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        let token = try await self.hs256(self.claims())
        let verified = try await verifier.verify(token).get()
        let auth = verified.auth
        #expect(verified.expires == Int64(self.now + 3600) * 1000)
        let expected: [String: JSONValue] = [
            "sub": "alice", "exp": .int(Int64(self.now + 3600)), "iat": .int(Int64(self.now - 10)), "name": "Alice",
        ]
        #expect(auth.variable == .object(["uid": "alice", "token": .object(expected)]))
        #expect(auth == AuthContext(uid: "alice", token: expected))
    }

    @Test("HS256 with another secret is refused")
    func hs256WrongSecret() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(
            verifier, try await self.hs256(self.claims(), secret: "another-secret-another-secret-another"), "signature is not valid")
        // A token altered after signing.
        let token = try await self.hs256(self.claims())
        let parts = token.split(separator: ".")
        let forged = "\(parts[0]).\(base64URL(Array(#"{"sub":"mallory","exp":\#(self.now + 60)}"#.utf8))).\(parts[2])"
        await self.expectRejected(verifier, forged, "signature is not valid")
        await self.expectAccepted(verifier, token)
    }

    @Test("exp is required and checked, with 60 s of leeway; nbf and iat not in the future")
    func expiry() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(verifier, try await self.hs256(self.claims(expiresIn: -61)), "has expired")
        await self.expectAccepted(verifier, try await self.hs256(self.claims(expiresIn: -30)))
        await self.expectRejected(verifier, try await self.hs256(self.claims(expiresIn: nil)), "no expiry (exp)")
        var early = self.claims()
        early.nbf = self.now + 600
        await self.expectRejected(verifier, try await self.hs256(early), "not valid yet")
        var future = self.claims()
        future.iat = self.now + 600
        await self.expectRejected(verifier, try await self.hs256(future), "issued in the future")
    }

    @Test("sub is required: a non-empty string of at most 128 characters")
    func subject() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(verifier, try await self.hs256(self.claims(sub: nil)), "no subject (sub)")
        await self.expectRejected(verifier, try await self.hs256(self.claims(sub: "")), "no subject (sub)")
        await self.expectRejected(verifier, try await self.hs256(self.claims(sub: String(repeating: "u", count: 129))), "longer than 128")
        let long = String(repeating: "u", count: 128)
        await self.expectAccepted(verifier, try await self.hs256(self.claims(sub: long)), uid: long)
    }

    @Test("with an audience and an issuer configured, aud must name the audience and iss be the issuer")
    func audienceAndIssuer() async throws {
        let verifier = try self.verifier {
            $0.jwtSecret = Array(Self.secret.utf8)
            $0.jwtAudience = "my-project"
            $0.jwtIssuer = "https://securetoken.google.com/my-project"
        }
        var claims = self.claims()
        await self.expectRejected(verifier, try await self.hs256(claims), "not meant for this server (aud)")
        claims.aud = ["other-project"]
        await self.expectRejected(verifier, try await self.hs256(claims), "not meant for this server (aud)")
        claims.aud = ["other-project", "my-project"]
        await self.expectRejected(verifier, try await self.hs256(claims), "not from the configured issuer (iss)")
        claims.iss = "https://securetoken.google.com/other-project"
        await self.expectRejected(verifier, try await self.hs256(claims), "not from the configured issuer (iss)")
        claims.iss = "https://securetoken.google.com/my-project"
        await self.expectAccepted(verifier, try await self.hs256(claims))
        // Without them configured, neither is looked at.
        let open = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        claims.aud = ["anything"]
        await self.expectAccepted(open, try await self.hs256(claims))
    }

    @Test("Not a JWT")
    func notJWT() async throws {
        let verifier = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        for token in [
            "", "abc", "a.b.c", "a.b", "..", rawToken(header: "[1]", payload: "{}"), rawToken(header: #"{"alg":"HS256"}"#, payload: "1"),
        ] {
            await self.expectRejected(verifier, token, "is not a JWT")
        }
        await self.expectRejected(verifier, rawToken(header: #"{"typ":"JWT"}"#, payload: #"{"sub":"a"}"#), "is not a JWT")
        // Unpadded base64url only, canonical.
        #expect(SignedToken.base64URLDecoded(Array("YQ".utf8)) == [0x61])
        #expect(SignedToken.base64URLDecoded(Array("_-8".utf8)) == [0xFF, 0xEF])
        for bad in ["Y", "YR", "YQ==", "Y+", "Y/", "Y Q"] { #expect(SignedToken.base64URLDecoded(Array(bad.utf8)) == nil, "\(bad)") }
    }
}
