import CanopyRules

/// Placeholder until user tokens are verified: every token is refused.
final class TokenVerifier: Sendable {
    init(configuration: ServerConfiguration) {}

    func verify(_ token: String) async -> Result<AuthContext, TokenRejection> {
        .failure(TokenRejection(message: "User tokens are not verified by this server."))
    }
}

struct TokenRejection: Error, Sendable {
    var message: String
}

extension ServerConfiguration {
    public var verifiesUserTokens: Bool { false }
}

extension ServerConfiguration {
    public var jwtSecret: [UInt8]? { nil }
    public var jwtKeys: String? { nil }
    public var allowUnsignedTokens: Bool { false }
}
