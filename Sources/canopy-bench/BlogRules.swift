// B12's rules document: the blog's (owner-only writes, validated fields, indexed queries), its
// users, and the secret the server child verifies their tokens with.

import CanopyRules

enum BlogRules {
    /// The rules document, as `canopy serve --rules` would load it.
    static let source = """
        {
          "rules": {
            "posts": {
              ".read": true,
              ".indexOn": ["starCount", "author"],
              "$post": {
                ".write": "auth != null && (!data.exists() || data.child('author').val() === auth.uid)",
                ".validate": "newData.hasChildren(['author', 'title'])",
                "author": {".validate": "newData.val() === auth.uid"},
                "title": {".validate": "newData.isString() && newData.val().length <= 200"},
                "body": {".validate": "newData.isString()"},
                "starCount": {".validate": "newData.isNumber() && newData.val() >= 0"},
                "$other": {".validate": false}
              }
            },
            "users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth != null && auth.uid === $uid"}}
          }
        }
        """

    /// The writers of the in-process scenarios: post `i` is written by `users[i % users.count]`.
    static let users: [String] = (0..<16).map { paddedKey(UInt8(ascii: "u"), $0, digits: 2) }

    /// The identities of ``users``, as writes in the process carry them.
    static let authContexts = Self.users.map { AuthContext(uid: $0) }

    /// The user of HTTP client `client`.
    static func clientUser(_ client: Int) -> String { paddedKey(UInt8(ascii: "c"), client, digits: 3) }

    /// The HS256 secret of the server child's user tokens (`configuration.jwtSecret`).
    static let secret: [UInt8] = Array("canopy-bench-b12-hs256-secret-of-40-bytes".utf8)

    /// The server child's admin token (`configuration.authToken`), which opens the namespace.
    static let adminToken = "canopy-bench-b12-admin"
}
