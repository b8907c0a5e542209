import CanopyRules

/// A user token that passed ``TokenVerifier``: who it signs in, and until when.
struct VerifiedToken: Sendable, Equatable {
    /// `auth` in rules: `auth.uid` and `auth.token`.
    var auth: AuthContext
    /// When the sign-in ends, in ms since 1970: the token's `exp`. `nil` for an emulator token
    /// (unsigned, under ``ServerConfiguration/allowUnsignedTokens``), which never expires, as in
    /// the Firebase emulator.
    var expires: Int64?

    /// `expires` from `exp` in seconds (`nil`: never).
    init(auth: AuthContext, expiresAt seconds: Double?) {
        self.auth = auth
        if let seconds, seconds.isFinite, abs(seconds) < 9e12 {
            self.expires = Int64((seconds * 1000).rounded(.down))
        } else {
            self.expires = nil
        }
    }
}
