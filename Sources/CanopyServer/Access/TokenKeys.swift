import JWTKit

/// The keys the operator configured for user tokens, read from ``ServerConfiguration/jwtSecret``
/// and ``ServerConfiguration/jwtKeys``; reading them is how the configuration is checked.
struct TokenKeys: Sendable {
    var keys: [TokenKey] = []
    /// ``ServerConfiguration/allowUnsignedTokens``: signatures are not checked.
    var allowsUnsigned: Bool

    /// Reads the configured keys; the error says which part is wrong, never quoting a secret.
    init(configuration: ServerConfiguration) throws(ServerError) {
        self.allowsUnsigned = configuration.allowUnsignedTokens
        if let secret = configuration.jwtSecret {
            guard !secret.isEmpty else { throw ServerError("The JWT secret (--jwt-secret-file) is empty.") }
            // RFC 7518 §3.2; jwt-kit asserts it too.
            guard secret.count >= 32 else {
                throw ServerError("The JWT secret (--jwt-secret-file) is \(secret.count) bytes long; HS256 needs at least 32.")
            }
            self.keys.append(TokenKey(material: .hmac(.init(from: secret))))
        }
        if let text = configuration.jwtKeys {
            let trimmed = text.drop { $0.isWhitespace }
            if trimmed.first == "{" {
                self.keys += try Self.readJSON(text)
            } else {
                self.keys += try Self.readPEM(text)
            }
        }
    }

    /// The algorithms some key verifies, in a fixed order.
    var algorithms: [TokenAlgorithm] {
        TokenAlgorithm.allCases.filter { algorithm in self.keys.contains { $0.algorithm == algorithm } }
    }

    /// The keys to try on a token signed with `algorithm`: those of its key id when some key has
    /// it, else every key of that algorithm.
    func candidates(for algorithm: TokenAlgorithm, keyID: String?) -> [TokenKey] {
        let matching = self.keys.filter { $0.algorithm == algorithm }
        if let keyID {
            let named = matching.filter { $0.keyID == keyID }
            if !named.isEmpty { return named }
        }
        return matching
    }
}
