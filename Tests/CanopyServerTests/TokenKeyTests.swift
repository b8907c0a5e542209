import CanopyCore
import CanopyRules
import Foundation
import JWTKit
import Testing

@testable import CanopyServer

/// RS256 and ES256 keys from PEM and JWKS, algorithm checks, unsigned tokens, key file mistakes.
extension TokenVerifierTests {
    /// A JWK of the RSA test key's public half.
    func rsaJWK(kid: String) throws -> String {
        let (modulus, exponent) = try Insecure.RSA.PublicKey(pem: keyFixture("jwt-rsa-public.pem")).getKeyPrimitives()
        return
            #"{"kty": "RSA", "kid": "\#(kid)", "use": "sig", "alg": "RS256", "n": "\#(base64URL(modulus))", "e": "\#(base64URL(exponent))"}"#
    }

    func ecJWK(_ key: ES256PrivateKey, kid: String) throws -> String {
        let parameters = try #require(key.parameters)
        return #"{"kty": "EC", "kid": "\#(kid)", "crv": "P-256", "x": "\#(parameters.x)", "y": "\#(parameters.y)"}"#
    }

    @Test("RS256 and ES256 with PEM public keys, several blocks in one file")
    func pemPublicKeys() async throws {
        let ec = ES256PrivateKey()
        let pem = "A comment line\n" + (try keyFixture("jwt-rsa-public.pem")) + "\n" + ec.publicKey.pemRepresentation
        let verifier = try self.verifier { $0.jwtKeys = pem }
        await self.expectAccepted(verifier, try await self.rs256(self.claims(sub: "rsa-user")), uid: "rsa-user")
        await self.expectAccepted(verifier, try await self.es256(self.claims(sub: "ec-user"), key: ec), uid: "ec-user")
        await self.expectRejected(verifier, try await self.es256(self.claims(), key: ES256PrivateKey()), "signature is not valid")
    }

    @Test("RS256 and ES256 with X.509 certificates")
    func certificates() async throws {
        let pem = try keyFixture("jwt-rsa-cert.pem") + keyFixture("jwt-ec-cert.pem")
        let verifier = try self.verifier { $0.jwtKeys = pem }
        await self.expectAccepted(verifier, try await self.rs256(self.claims()))
        let ec = try ES256PrivateKey(pem: keyFixture("jwt-ec-private.pem"))
        await self.expectAccepted(verifier, try await self.es256(self.claims(), key: ec))
    }

    @Test("A JWKS document: RS256 and ES256 keys, chosen by kid")
    func jwks() async throws {
        let ecA = ES256PrivateKey()
        let ecB = ES256PrivateKey()
        let document = """
            {"keys": [\(try self.rsaJWK(kid: "r1")), \(try self.ecJWK(ecA, kid: "a")), \(try self.ecJWK(ecB, kid: "b")),
              {"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}]}
            """
        let verifier = try self.verifier { $0.jwtKeys = document }
        await self.expectAccepted(verifier, try await self.rs256(self.claims(), kid: "r1"))
        await self.expectAccepted(verifier, try await self.es256(self.claims(), key: ecA, kid: "a"))
        await self.expectAccepted(verifier, try await self.es256(self.claims(), key: ecB, kid: "b"))
        // Without a kid, or with one no key has, every ES256 key is tried.
        await self.expectAccepted(verifier, try await self.es256(self.claims(), key: ecB))
        await self.expectAccepted(verifier, try await self.es256(self.claims(), key: ecB, kid: "unknown"))
        // The key a kid names is the only one tried.
        await self.expectRejected(verifier, try await self.es256(self.claims(), key: ecB, kid: "a"), "signature is not valid")
    }

    @Test("The algorithm must be one a key is configured for: no HS256 token with RSA keys only")
    func algorithmMismatch() async throws {
        let publicPEM = try keyFixture("jwt-rsa-public.pem")
        let verifier = try self.verifier { $0.jwtKeys = publicPEM }
        await self.expectRejected(verifier, try await self.hs256(self.claims()), "signed with HS256; this server verifies RS256")
        // The classic confusion: HS256 with the public key as the secret.
        await self.expectRejected(verifier, try await self.hs256(self.claims(), secret: publicPEM), "signed with HS256")
        await self.expectRejected(
            verifier, rawToken(header: #"{"alg":"RS512"}"#, payload: #"{"sub":"a","exp":\#(self.now + 60)}"#, signature: "AAAA"),
            "not one this server verifies (RS256)")
        let secretOnly = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(secretOnly, try await self.rs256(self.claims()), "this server verifies HS256")
    }

    @Test("alg none is refused unless unsigned tokens are allowed; then any signature passes, claims are still checked")
    func unsignedTokens() async throws {
        let unsigned = rawToken(header: #"{"alg":"none","typ":"JWT"}"#, payload: #"{"sub":"dev","exp":\#(self.now + 60),"admin":true}"#)
        let strict = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(strict, unsigned, "not signed")
        let open = try self.verifier { $0.allowUnsignedTokens = true }
        let auth = try await open.verify(unsigned).get().auth
        #expect(auth.variable == .object(["uid": "dev", "token": ["sub": "dev", "exp": .int(Int64(self.now + 60)), "admin": true]]))
        // Signed with a key the server does not have, or altered: accepted all the same.
        let openWithSecret = try self.verifier {
            $0.allowUnsignedTokens = true
            $0.jwtSecret = Array(Self.secret.utf8)
        }
        await self.expectAccepted(openWithSecret, try await self.hs256(self.claims(), secret: "not-the-configured-secret-at-all"))
        await self.expectAccepted(openWithSecret, try await self.rs256(self.claims()))
        // Unsigned tokens are the emulator's: their times are not checked (a signed one's still are).
        await self.expectAccepted(
            open, rawToken(header: #"{"alg":"none"}"#, payload: #"{"sub":"dev","exp":\#(self.now - 100)}"#), uid: "dev")
        await self.expectRejected(openWithSecret, try await self.hs256(self.claims(expiresIn: -100)), "has expired")
        await self.expectRejected(open, rawToken(header: #"{"alg":"none"}"#, payload: #"{"exp":\#(self.now + 100)}"#), "no subject")
        // Without sub, an unsigned token's user_id names the user (mockUserToken takes either); sub wins.
        await self.expectAccepted(open, rawToken(header: #"{"alg":"none"}"#, payload: #"{"user_id":"dev"}"#), uid: "dev")
        await self.expectAccepted(open, rawToken(header: #"{"alg":"none"}"#, payload: #"{"sub":"dev","user_id":"other"}"#), uid: "dev")
        await self.expectRejected(open, rawToken(header: #"{"alg":"none"}"#, payload: #"{"user_id":""}"#), "no subject (sub or user_id)")
        await self.expectRejected(
            openWithSecret, try await self.hs256(TokenTestClaims(sub: nil, exp: self.now + 100)), "no subject (sub)")
        await self.expectRejected(open, "not.a.jwt", "is not a JWT")
    }

    @Test(
        "the JS SDK's mockUserToken, as connectDatabaseEmulator builds it (iat 0, exp 3600, no signature), where unsigned tokens are allowed"
    )
    func mockUserTokenOfTheSDK() async throws {
        let token = sdkMockUserToken(sub: "alice")
        #expect(token.hasSuffix("."), "the SDK's empty signature")
        let open = try self.verifier { $0.allowUnsignedTokens = true }
        let verified = try await open.verify(token).get()
        let auth = verified.auth
        #expect(auth.uid == "alice")
        #expect(verified.expires == nil, "the emulator's sign-in does not end at its exp")
        #expect(auth.variable["token"]?["firebase"]?["sign_in_provider"] == "custom")
        #expect(auth.variable["token"]?["user_id"] == "alice" && auth.variable["token"]?["exp"] == 3600)
        // Cached like any other, though its exp lies in 1970.
        _ = try await open.verify(token).get()
        #expect(open.cachedCount == 1)
        let strict = try self.verifier { $0.jwtSecret = Array(Self.secret.utf8) }
        await self.expectRejected(strict, token, "not signed")
    }

    @Test("Key mistakes fail init and validate(), naming the part that is wrong and quoting no secret")
    func badKeys() throws {
        let privatePEM = try keyFixture("jwt-rsa-private.pem")
        let secretBody = privatePEM.split(separator: "\n")[1]
        let cases: [(keys: String?, secret: [UInt8]?, message: String)] = [
            (nil, [], "The JWT secret (--jwt-secret-file) is empty."),
            (nil, Array("hunter2-too-short".utf8), "is 17 bytes long; HS256 needs at least 32"),
            ("garbage", nil, "--jwt-keys: found no PEM block"),
            (privatePEM, Array("hunter2-the-secret-of-at-least-32-bytes".utf8), "--jwt-keys: the PEM block (PRIVATE KEY) is a private key"),
            (try keyFixture("jwt-rsa1024-public.pem"), nil, "neither an RSA public key of at least 2048 bits"),
            (try keyFixture("jwt-rsa-public.pem") + "-----BEGIN PUBLIC KEY-----\nAAAA\n", nil, "PEM block 2 (PUBLIC KEY) has no END line"),
            (
                try keyFixture("jwt-rsa-public.pem") + "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", nil,
                "PEM block 2 (PUBLIC KEY) is neither"
            ),
            ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----", nil, "is not an X.509 certificate"),
            (#"{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}"#, nil, "key 1 of the JWKS document is not an RSA key"),
            (
                #"{"keys": [{"kty": "RSA", "kid": "x", "n": "AQAB", "e": "AQAB"}]}"#, nil,
                #"key 1 (kid "x") of the JWKS document is not an RSA public key"#
            ),
            (#"{"keys": [{"kty": "RSA", "kid": "x", "alg": "RS512", "n": "AQAB", "e": "AQAB"}]}"#, nil, "is for RS512, not RS256"),
            (#"{"keys": [{"kty": "EC", "crv": "P-384", "x": "AA", "y": "AA"}]}"#, nil, "not on curve P-256"),
            (#"{"keys": [{"kty": "RSA", "n": "AQAB", "e": "AQAB", "d": "AQAB"}]}"#, nil, "is a private key"),
            (#"{"keys": [{"kty": "RSA", "use": "enc", "n": "AQAB", "e": "AQAB"}]}"#, nil, "holds no signing key"),
            (#"{"keys": [1"#, nil, "the JSON document is not valid"),
            (#"{"k1": "-----BEGIN CERTIFICATE-----"}"#, nil, "expected a JWKS document"),
        ]
        for (keys, secret, message) in cases {
            var configuration = ServerConfiguration()
            configuration.jwtKeys = keys
            configuration.jwtSecret = secret
            #expect(configuration.verifiesUserTokens)
            let error = #expect(throws: ServerError.self, "\(message)") { try TokenVerifier(configuration: configuration) }
            #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
            #expect(error?.message.contains("hunter2") == false)
            #expect(error?.message.contains(secretBody) == false)
            #expect(throws: ServerError.self) { try configuration.validate() }
        }
        #expect(!ServerConfiguration().verifiesUserTokens)
    }
}
