import CanopyRules

/// Who a request or a connection acts as.
enum Identity: Sendable, Equatable {
    /// The server's administrator: the `--auth-token`, or the emulator's `owner` on a server
    /// without configured credentials. Rules do not apply.
    case admin
    /// A user whose token was verified: rules see its claims as `auth`. `expires` is the token's
    /// `exp` in ms since 1970; `nil` when the sign-in does not expire (an emulator token, an
    /// administrator's `authvar`).
    case user(AuthContext, expires: Int64?)
    /// No credentials: rules see `auth == null`.
    case anonymous

    /// `auth` in rules (`nil` for anonymous); `nil` for the admin too, who is never judged.
    var auth: AuthContext? {
        if case .user(let context, _) = self { return context }
        return nil
    }

    var isAdmin: Bool { self == .admin }

    /// Whether this is a user whose token expired by `now` (ms since 1970; read only for a user
    /// whose token expires, so a request of any other identity reads no clock).
    func hasExpired(by now: @autoclosure () -> Int64) -> Bool {
        if case .user(_, let expires?) = self { return expires <= now() }
        return false
    }
}
