extension TokenRejection {
    /// The status an `auth` refused for this reason answers: the SDKs refresh an expired token.
    var wireStatus: String { self == .expired ? "expired_token" : "invalid_token" }
}
