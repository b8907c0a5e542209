/// Tokens verified recently, so that a client repeating its token on every request does not
/// cost a signature check each time. Bounded: when full, expired entries go, then arbitrary ones
/// until a quarter is free. An entry is never used at or after its token's expiry.
struct TokenCache: Sendable {
    /// Longer tokens are not kept (a Firebase ID token is about 1 KB).
    static let maxTokenBytes = 4096

    private struct Entry: Sendable {
        var verified: VerifiedToken
        var expires: Double
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    var count: Int { self.entries.count }

    /// The identity verified for `token`, if it has not expired at `now`.
    mutating func lookup(_ token: String, now: Double) -> VerifiedToken? {
        guard let entry = self.entries[token] else { return nil }
        guard now < entry.expires else {
            self.entries[token] = nil
            return nil
        }
        return entry.verified
    }

    /// Keeps `verified` for `token` until `expires` (seconds since 1970).
    mutating func insert(_ token: String, _ verified: VerifiedToken, until expires: Double, now: Double) {
        guard token.utf8.count <= Self.maxTokenBytes, now < expires else { return }
        if self.entries.count >= self.capacity && self.entries[token] == nil {
            self.entries = self.entries.filter { now < $0.value.expires }
            let keep = self.capacity - max(self.capacity / 4, 1)
            while self.entries.count > keep, let victim = self.entries.keys.first { self.entries[victim] = nil }
        }
        self.entries[token] = Entry(verified: verified, expires: expires)
    }
}
