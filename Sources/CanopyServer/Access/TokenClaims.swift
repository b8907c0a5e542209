import CanopyCore

/// The checks on a token's registered claims, as Firebase makes them on ID tokens: an expiry
/// (`exp`) in the future, no `nbf` or `iat` in the future, and a subject (`sub`, the user's id)
/// that is a non-empty string of at most 128 characters. Times are seconds since 1970 and are
/// allowed ``leeway`` of clock skew either way. Firebase also checks `aud` and `iss` against its
/// project: here they are checked when the operator names them (`--jwt-audience`,
/// `--jwt-issuer`).
enum TokenClaims {
    /// The clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
    static let leeway: Double = 60

    /// How long an emulator token (unsigned, times unchecked) stays cached, in seconds.
    static let emulatorTokenLifetime: Double = 3600

    /// The subject (the user id) and the expiry (`exp`) of `claims` if they pass at time `now`.
    /// Without `checkingTimes` (the emulator's unsigned tokens), `exp`, `nbf` and `iat` are not
    /// checked, the expiry is `nil` (never), and the subject may be `user_id` when there is no
    /// `sub` (the SDKs' `mockUserToken` takes either).
    static func check(
        _ claims: [String: JSONValue], now: Double, audience: String? = nil, issuer: String? = nil, checkingTimes: Bool = true
    ) throws(TokenRejection) -> (uid: String, expires: Double?) {
        if let audience {
            let named: Bool
            switch claims["aud"] {
            case .string(let aud)?: named = aud == audience
            case .array(let auds)?: named = auds.contains(.string(audience))
            default: named = false
            }
            guard named else { throw TokenRejection("The auth token is not meant for this server (aud).") }
        }
        if let issuer {
            guard claims["iss"] == .string(issuer) else { throw TokenRejection("The auth token is not from the configured issuer (iss).") }
        }
        guard checkingTimes else { return (try self.subject(claims, orUserID: true), expires: nil) }
        guard let exp = claims["exp"] else { throw TokenRejection("The auth token has no expiry (exp).") }
        guard let expires = self.seconds(exp) else { throw TokenRejection("The auth token's expiry (exp) is not a number.") }
        guard now < expires + self.leeway else { throw .expired }
        if let nbf = claims["nbf"] {
            guard let notBefore = self.seconds(nbf) else { throw TokenRejection("The auth token's nbf is not a number.") }
            guard notBefore <= now + self.leeway else { throw TokenRejection("The auth token is not valid yet (nbf).") }
        }
        if let iat = claims["iat"] {
            guard let issued = self.seconds(iat) else { throw TokenRejection("The auth token's iat is not a number.") }
            guard issued <= now + self.leeway else { throw TokenRejection("The auth token was issued in the future (iat).") }
        }
        return (try self.subject(claims), expires)
    }

    /// `sub` (or, `orUserID`, `user_id` when there is no `sub`): a non-empty string of at most 128
    /// characters.
    private static func subject(_ claims: [String: JSONValue], orUserID: Bool = false) throws(TokenRejection) -> String {
        let claim = orUserID && claims["sub"] == nil ? "user_id" : "sub"
        guard case .string(let uid)? = claims[claim], !uid.isEmpty else {
            throw TokenRejection(
                orUserID
                    ? "The auth token has no subject (sub or user_id): it must name the user."
                    : "The auth token has no subject (sub): it must name the user.")
        }
        guard uid.utf16.count <= 128 else { throw TokenRejection("The auth token's subject (\(claim)) is longer than 128 characters.") }
        return uid
    }

    private static func seconds(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d) where d.isFinite: return d
        default: return nil
        }
    }
}
