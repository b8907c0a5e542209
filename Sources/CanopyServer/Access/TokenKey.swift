import JWTKit

/// The signing algorithms user tokens may use.
enum TokenAlgorithm: String, Sendable, CaseIterable {
    case hs256 = "HS256"
    case rs256 = "RS256"
    case es256 = "ES256"
}

/// One key that user tokens are verified with.
struct TokenKey: Sendable {
    enum Material: Sendable {
        /// The HS256 secret.
        case hmac(HMACKey)
        case rsa(Insecure.RSA.PublicKey)
        case ecdsa(ES256PublicKey)
    }

    var material: Material
    /// The key id (`kid`) tokens signed with it name, when known (JWKS documents give one).
    var keyID: String?

    var algorithm: TokenAlgorithm {
        switch self.material {
        case .hmac: return .hs256
        case .rsa: return .rs256
        case .ecdsa: return .es256
        }
    }

    /// Whether `token` is signed with this key, by jwt-kit (which also checks that the payload is
    /// JSON; the claims are checked by ``TokenClaims``).
    func verifies(_ token: String) async -> Bool {
        let keys = JWTKeyCollection()
        switch self.material {
        case .hmac(let key): await keys.add(hmac: key, digestAlgorithm: .sha256)
        case .rsa(let key): await keys.add(rsa: key, digestAlgorithm: .sha256)
        case .ecdsa(let key): await keys.add(ecdsa: key)
        }
        do {
            _ = try await keys.verify(token, as: AnyClaims.self)
            return true
        } catch {
            return false
        }
    }
}

/// A payload of any claims: jwt-kit checks the signature; ``TokenClaims`` checks the claims.
private struct AnyClaims: JWTPayload {
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
