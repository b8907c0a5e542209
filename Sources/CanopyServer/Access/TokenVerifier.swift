import CanopyRules
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Verifies user tokens (JWTs) with the keys the operator configured
/// (``ServerConfiguration/jwtSecret``, ``ServerConfiguration/jwtKeys``), and turns their claims
/// into the `auth` of security rules: `auth.uid` from `sub`, `auth.token` the claims, and the
/// moment the sign-in ends (`exp`).
///
/// A token passes when:
/// - it is a compact JWT whose header names its algorithm and whose payload is a JSON object;
/// - its algorithm is HS256, RS256 or ES256 and a configured key of that algorithm (the one its
///   `kid` names, when a key has that id; else any of them) verifies its signature, by jwt-kit;
/// - its claims pass ``TokenClaims`` (`exp` required and in the future, `nbf` and `iat` not in the
///   future, all with 60 s of leeway; `sub` a non-empty string of at most 128 characters).
///
/// With ``ServerConfiguration/allowUnsignedTokens`` the signature is not checked at all: tokens
/// with `alg: none`, with a signature no key verifies, or with an algorithm no key is configured
/// for all pass if their claims do, as in the Firebase emulator. An unsigned token (`alg: none`,
/// what the SDKs' `mockUserToken` builds, with `iat: 0` and `exp: 3600`) passes whatever its
/// `exp`, `nbf` and `iat`, as the emulator accepts it, and its sign-in never expires; it still
/// needs its `sub` (or `user_id`). Development only.
///
/// Verified tokens are cached (up to 10,000, each until its `exp`), so a client that sends the
/// same token with every request costs one signature check.
final class TokenVerifier: Sendable {
    private let keys: TokenKeys
    private let cache: Mutex<TokenCache>
    private let clock: @Sendable () -> Double

    /// Reads the keys of `configuration`; the error names the part of the key file that is
    /// wrong. `clock` gives the time in seconds since 1970.
    /// The `aud` and `iss` a token must carry, when configured.
    private let audience: String?
    private let issuer: String?

    init(
        configuration: ServerConfiguration, cacheCapacity: Int = 10_000,
        clock: @escaping @Sendable () -> Double = TokenVerifier.wallClock
    ) throws(ServerError) {
        self.keys = try TokenKeys(configuration: configuration)
        self.audience = configuration.jwtAudience
        self.issuer = configuration.jwtIssuer
        self.cache = Mutex(TokenCache(capacity: cacheCapacity))
        self.clock = clock
    }

    /// The identity `token` proves, or why it proves none.
    func verify(_ token: String) async -> Result<VerifiedToken, TokenRejection> {
        let now = self.clock()
        if let verified = self.cache.withLock({ $0.lookup(token, now: now) }) { return .success(verified) }
        let parsed: SignedToken
        let claims: (uid: String, expires: Double?)
        do throws(TokenRejection) {
            parsed = try SignedToken(parsing: token)
            // An unsigned token where none are allowed: say so first, not that its (emulator) exp passed.
            if !self.keys.allowsUnsigned && parsed.algorithm == "none" { throw TokenRejection.unsigned }
            let emulatorToken = self.keys.allowsUnsigned && parsed.algorithm == "none"
            claims = try TokenClaims.check(
                parsed.claims, now: now, audience: self.audience, issuer: self.issuer, checkingTimes: !emulatorToken)
            if !self.keys.allowsUnsigned { try await self.checkSignature(token, parsed) }
        } catch {
            return .failure(error)
        }
        let verified = VerifiedToken(auth: AuthContext(uid: claims.uid, token: parsed.claims), expiresAt: claims.expires)
        let cachedUntil = claims.expires ?? now + TokenClaims.emulatorTokenLifetime
        self.cache.withLock { $0.insert(token, verified, until: cachedUntil, now: now) }
        return .success(verified)
    }

    /// The time, in seconds since 1970.
    static func wallClock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// The number of tokens cached.
    var cachedCount: Int { self.cache.withLock { $0.count } }

    private func checkSignature(_ token: String, _ parsed: SignedToken) async throws(TokenRejection) {
        if parsed.algorithm == "none" { throw .unsigned }
        let configured = self.keys.algorithms.map(\.rawValue).joined(separator: " or ")
        guard let algorithm = TokenAlgorithm(rawValue: parsed.algorithm) else {
            throw TokenRejection("The auth token's algorithm is not one this server verifies (\(configured)).")
        }
        let candidates = self.keys.candidates(for: algorithm, keyID: parsed.keyID)
        guard !candidates.isEmpty else {
            throw TokenRejection("The auth token is signed with \(algorithm.rawValue); this server verifies \(configured).")
        }
        for key in candidates {
            if await key.verifies(token) { return }
        }
        throw .badSignature
    }
}
