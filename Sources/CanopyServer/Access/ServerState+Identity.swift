import CanopyCore
import CanopyRules

extension ServerState {
    /// Whether the server guards its data: an admin token, user tokens or a rules file is
    /// configured. A guarded server starts every namespace locked until rules grant access, and
    /// only its administrator may open a namespace that does not exist yet; an unguarded one (a
    /// loopback development server) starts every namespace open.
    var isGuarded: Bool {
        self.configuration.authToken != nil || self.configuration.verifiesUserTokens || self.configuration.rules != nil
    }

    /// Whether `identity` may make the server open namespace `name` when it does not exist yet: on a
    /// guarded server only the administrator may (each namespace is a database with threads of
    /// its own), except for the server's default namespace.
    func mayCreate(_ name: String, identity: Identity) -> Bool {
        identity.isAdmin || !self.isGuarded || name == self.configuration.defaultNamespace
    }

    /// Whether `owner` is the administrator: only where no real credential is configured (as in
    /// Firebase's emulator). On a server with an admin token or verified user tokens it is just an
    /// invalid token.
    private var acceptsOwner: Bool {
        self.configuration.authToken == nil && self.configuration.jwtSecret == nil && self.configuration.jwtKeys == nil
    }

    /// The identity a presented credential proves: the admin token (or `owner`, see above), a
    /// verified user token, or none (`nil` token: anonymous).
    ///
    /// - Returns: the rejection's message for a token that proves nothing (never the token).
    func identify(_ token: String?) async -> Result<Identity, TokenRejection> {
        guard let token, !token.isEmpty else { return .success(.anonymous) }
        if let admin = self.configuration.authToken, CanopyResponder.constantTimeEqual(token, admin) { return .success(.admin) }
        if token == "owner" && self.acceptsOwner { return .success(.admin) }
        guard let verifier = self.verifier else {
            return .failure(
                TokenRejection(
                    self.configuration.authToken == nil
                        ? "User tokens are not accepted: this server has no --jwt-secret-file, --jwt-keys or --allow-unsigned-tokens."
                        : "The auth token is not valid."))
        }
        switch await verifier.verify(token) {
        case .success(let verified): return .success(.user(verified.auth, expires: verified.expires))
        case .failure(let rejection): return .failure(rejection)
        }
    }
}
