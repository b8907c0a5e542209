/// Why a user token (JWT) was refused. The message says what is wrong in general terms: it never
/// quotes the token, its claims or a key.
struct TokenRejection: Error, Sendable, Equatable, CustomStringConvertible {
    var message: String

    init(_ message: String) { self.message = message }

    var description: String { self.message }

    static let notJWT = TokenRejection("The auth token is not a JWT.")
    static let expired = TokenRejection("The auth token has expired.")
    static let badSignature = TokenRejection("The auth token's signature is not valid.")
    static let unsigned = TokenRejection("The auth token is not signed (alg \"none\"); this server accepts signed tokens only.")
}
