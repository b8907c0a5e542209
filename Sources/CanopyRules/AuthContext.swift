package import CanopyCore

/// Who is asking: the value of `auth` in rules (*The Rules Language*, *Variables*). `nil` where an `AuthContext?` is taken
/// means unauthenticated (`auth == null`). JWT verification happens before, elsewhere.
package struct AuthContext: Sendable, Equatable {
    /// The `auth` object exactly as rules see it.
    package let variable: JSONValue
    /// `auth.uid` as rules see it (any type; `nil` when `auth` has no `uid` member), found once
    /// here, not on every check.
    let uidMember: JSONValue?

    /// A signed-in user: `auth.uid`, `auth.token` (the token's claims) and, when the claims name
    /// it, `auth.provider` (from `firebase.sign_in_provider`).
    package init(uid: String, token: [String: JSONValue] = [:]) {
        var object: [String: JSONValue] = ["uid": .string(uid), "token": .object(token)]
        if case .object(let firebase)? = token["firebase"], case .string(let provider)? = firebase["sign_in_provider"] {
            object["provider"] = .string(provider)
        }
        self.variable = .object(object)
        self.uidMember = .string(uid)
    }

    /// An `auth` object used as given (`auth_variable_override`, legacy tokens with claims at the
    /// top level).
    package init(variable: JSONValue) {
        self.variable = variable
        if case .object(let o) = variable { self.uidMember = o["uid"] } else { self.uidMember = nil }
    }

    /// `auth.uid`, when it is a string.
    package var uid: String? {
        if case .string(let uid)? = self.uidMember { return uid }
        return nil
    }
}
