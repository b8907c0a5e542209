import Canopy
import Foundation
import Synchronization

/// The scripted scene: three users sign up, post, comment and star at the same time while the
/// live feeds print what they see.
final class Scene: Sendable {
    let database: Database
    let actions: BlogActions
    let feeds: Feeds

    init(database: Database) {
        self.database = database
        self.actions = BlogActions(database: database)
        self.feeds = Feeds(database: database)
    }

    /// Post titles by key, for readable feed lines.
    private let titles = Mutex<[String: String]>([:])

    private func title(_ key: String?) -> String {
        guard let key else { return "(first)" }
        return "\"" + (titles.withLock { $0[key] } ?? key) + "\""
    }

    func run() async throws {
        let ref = database.reference()
        let actions = self.actions
        // Fresh ids every run (data accumulates between runs).
        let users = ["ada", "grace", "linus"].map { name in
            User(uid: ref.child("users").childByAutoId().key ?? name, username: name, email: "\(name)@example.com")
        }
        let sceneUIDs = Set(users.map(\.uid))

        // Live feed: recent posts (the newest 100; older posts of earlier runs are skipped).
        let recentHandle = ref.child("posts").queryLimited(toLast: 100).observe(.childAdded) { snapshot in
            guard let post = Post(snapshot: snapshot), sceneUIDs.contains(post.uid) else { return }
            say("[recent posts] new: \"\(post.title)\" by \(post.author)")
        }
        // Live feed: each user's top posts, re-ordered as stars come in.
        var topHandles: [(DatabaseQuery, DatabaseHandle)] = []
        for user in users {
            let query = feeds.myTopPostsQuery(uid: user.uid)
            let handle = query.observe(
                .childMoved,
                andPreviousSiblingKeyWith: { snapshot, previousKey in
                    guard let post = Post(snapshot: snapshot) else { return }
                    say(
                        "[top posts of \(user.username)] \"\(post.title)\" moved (stars: \(post.starCount)), now after \(self.title(previousKey))"
                    )
                })
            topHandles.append((query, handle))
        }

        // 1. Everyone signs up and writes two posts, concurrently.
        let posts: [(user: User, keys: [String])] = try await withThrowingTaskGroup(of: (User, [String]).self) { group in
            for user in users {
                group.addTask {
                    try await actions.signUp(user)
                    say("[users] \(user.username) signed up")
                    var keys: [String] = []
                    for n in 1...2 {
                        let title = "\(user.username)'s post #\(n)"
                        let key = try await actions.writeNewPost(
                            withUserID: user.uid, username: user.username, title: title, body: "Hello from \(user.username)")
                        self.titles.withLock { $0[key] = title }
                        keys.append(key)
                    }
                    return (user, keys)
                }
            }
            var all: [(user: User, keys: [String])] = []
            for try await result in group { all.append(result) }
            return all.sorted { $0.user.username < $1.user.username }
        }

        // Live feed: the comments of every new post.
        var commentHandles: [(DatabaseReference, DatabaseHandle)] = []
        for (_, keys) in posts {
            for key in keys {
                let comments = feeds.commentsRef(postID: key)
                let postTitle = title(key)
                commentHandles.append(
                    (
                        comments,
                        comments.observe(.childAdded) { snapshot in
                            guard let comment = Comment(snapshot: snapshot) else { return }
                            say("[comments on \(postTitle)] + \(comment.author): \(comment.text)")
                        }
                    ))
                commentHandles.append(
                    (
                        comments,
                        comments.observe(.childRemoved) { snapshot in
                            guard let comment = Comment(snapshot: snapshot) else { return }
                            say("[comments on \(postTitle)] - \(comment.author): \(comment.text) (deleted)")
                        }
                    ))
            }
        }

        // 2. Everyone comments on and stars the others' posts, concurrently: each user stars every
        // other user's first post, the next user's second post too, and one user taps a star twice.
        let removable = try await withThrowingTaskGroup(of: [(String, String)].self) { group in
            for (index, me) in users.enumerated() {
                group.addTask {
                    var myComments: [(String, String)] = []
                    for (offset, other) in posts.enumerated() where other.user.uid != me.uid {
                        let first = other.keys[0]
                        let second = other.keys[1]
                        let commentID = try await actions.addComment(
                            postID: first, uid: me.uid, author: me.username, text: "Nice post, \(other.user.username)!")
                        myComments.append((first, commentID))
                        try await actions.onStarTapped(postID: first, authorID: other.user.uid, uid: me.uid)
                        if offset == (index + 1) % users.count {
                            try await actions.onStarTapped(postID: second, authorID: other.user.uid, uid: me.uid)
                        } else {
                            // Star, then change one's mind.
                            try await actions.onStarTapped(postID: second, authorID: other.user.uid, uid: me.uid)
                            try await actions.onStarTapped(postID: second, authorID: other.user.uid, uid: me.uid)
                        }
                    }
                    return myComments
                }
            }
            var all: [(String, String)] = []
            for try await comments in group { all += comments }
            return all
        }
        // 3. One comment is deleted.
        if let (postID, commentID) = removable.first {
            try await actions.removeComment(postID: postID, commentID: commentID)
        }
        // A read after the writes: every feed event before it has been delivered.
        _ = try await ref.child("users").child(users[0].uid).getData()

        ref.child("posts").removeObserver(withHandle: recentHandle)
        for (query, handle) in topHandles { query.removeObserver(withHandle: handle) }
        for (query, handle) in commentHandles { query.removeObserver(withHandle: handle) }

        // The top posts of each user now.
        for (user, _) in posts {
            let top = try await feeds.posts(feeds.myTopPostsQuery(uid: user.uid)).reversed()
            say("[top posts of \(user.username)] " + top.map { "\"\($0.title)\" (\($0.starCount))" }.joined(separator: ", "))
        }
    }
}

/// Writes one line to stdout at once, unbuffered (lines from several threads never interleave).
func say(_ line: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((line + terminator).utf8))
}
