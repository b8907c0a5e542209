import Canopy

/// A signed-up user, stored at `/users/$uid`.
struct User {
    var uid: String
    var username: String
    var email: String

    func toDictionary() -> [String: Any] {
        ["username": username, "email": email]
    }
}

/// A post, stored at `/posts/$postId` and copied to `/user-posts/$uid/$postId`.
struct Post {
    var key: String
    var uid: String
    var author: String
    var title: String
    var body: String
    var starCount: Int
    var stars: [String: Bool]

    init(key: String = "", uid: String, author: String, title: String, body: String) {
        self.key = key
        self.uid = uid
        self.author = author
        self.title = title
        self.body = body
        self.starCount = 0
        self.stars = [:]
    }

    init?(snapshot: DataSnapshot) {
        guard let value = snapshot.value as? [String: Any] else { return nil }
        self.key = snapshot.key ?? ""
        self.uid = value["uid"] as? String ?? ""
        self.author = value["author"] as? String ?? ""
        self.title = value["title"] as? String ?? ""
        self.body = value["body"] as? String ?? ""
        self.starCount = value["starCount"] as? Int ?? 0
        self.stars = value["stars"] as? [String: Bool] ?? [:]
    }

    /// The fields written for a new post (as the quickstart's `writeNewPost`).
    func toDictionary() -> [String: Any] {
        ["uid": uid, "author": author, "title": title, "body": body, "starCount": starCount]
    }
}

/// A comment, stored at `/post-comments/$postId/$commentId`.
struct Comment {
    var key: String
    var uid: String
    var author: String
    var text: String

    init(key: String = "", uid: String, author: String, text: String) {
        self.key = key
        self.uid = uid
        self.author = author
        self.text = text
    }

    init?(snapshot: DataSnapshot) {
        guard let value = snapshot.value as? [String: Any] else { return nil }
        self.key = snapshot.key ?? ""
        self.uid = value["uid"] as? String ?? ""
        self.author = value["author"] as? String ?? ""
        self.text = value["text"] as? String ?? ""
    }

    func toDictionary() -> [String: Any] {
        ["uid": uid, "author": author, "text": text]
    }
}
