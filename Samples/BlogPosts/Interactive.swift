import Canopy
import Foundation

/// `--interactive`: one command per line on stdin, plain-text answers on stdout.
struct Interactive {
    let database: Database
    let actions: BlogActions
    let feeds: Feeds
    var user: User

    static let help = """
        commands:
          post TITLE | BODY     write a post
          comment POSTID TEXT   comment on a post
          star POSTID           star (or unstar) a post
          recent                the recent posts
          top                   my posts, most stars first
          mine                  my posts
          user NAME             sign in as NAME (signs up on first use)
          help                  this list
          quit                  leave (so does end of input)
        """

    init(database: Database) {
        self.database = database
        self.actions = BlogActions(database: database)
        self.feeds = Feeds(database: database)
        self.user = Self.user(named: "guest")
    }

    /// The user called `name` (its uid is the name, so a name keeps its posts between runs).
    static func user(named name: String) -> User {
        User(uid: name, username: name, email: "\(name)@example.com")
    }

    mutating func run(prompt: Bool) async throws {
        try await actions.signUp(user)
        say("signed in as \(user.username)")
        while true {
            if prompt { say("> ", terminator: "") }
            guard let line = readLine() else { break }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            if trimmed == "quit" || trimmed == "exit" { break }
            do {
                try await execute(trimmed)
            } catch {
                say("error: \(error)")
            }
        }
        say("bye")
    }

    mutating func execute(_ line: String) async throws {
        let (command, rest) = Self.split(line)
        switch command {
        case "help":
            say(Self.help)
        case "user":
            guard !rest.isEmpty, !rest.contains(where: { "./#$[]".contains($0) || $0 == " " }) else { return say("usage: user NAME") }
            user = Self.user(named: rest)
            try await actions.signUp(user)
            say("signed in as \(user.username)")
        case "post":
            let parts = rest.split(separator: "|", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else { return say("usage: post TITLE | BODY") }
            let key = try await actions.writeNewPost(withUserID: user.uid, username: user.username, title: parts[0], body: parts[1])
            say("posted \(key) \"\(parts[0])\"")
        case "comment":
            let (postID, text) = Self.split(rest)
            guard !postID.isEmpty, !text.isEmpty else { return say("usage: comment POSTID TEXT") }
            guard try await post(postID) != nil else { return say("no post \(postID)") }
            let key = try await actions.addComment(postID: postID, uid: user.uid, author: user.username, text: text)
            say("commented \(key) on \(postID)")
        case "star":
            guard !rest.isEmpty, let post = try await post(rest) else { return say("no post \(rest)") }
            guard let (starCount, starred) = try await actions.onStarTapped(postID: post.key, authorID: post.uid, uid: user.uid) else {
                return say("no post \(rest)")
            }
            say("\(starred ? "starred" : "unstarred") \(post.key) (\(starCount) star\(starCount == 1 ? "" : "s"))")
        case "recent":
            try await list("recent posts", feeds.posts(feeds.recentPostsQuery()))
        case "top":
            try await list("top posts of \(user.username)", feeds.posts(feeds.myTopPostsQuery(uid: user.uid)).reversed())
        case "mine":
            try await list("posts of \(user.username)", feeds.posts(feeds.myPostsQuery(uid: user.uid)))
        default:
            say("unknown command \"\(command)\" (try help)")
        }
    }

    /// The post `postID`, or `nil` (also for a key that is not a valid path segment).
    private func post(_ postID: String) async throws -> Post? {
        guard !postID.contains(where: { "./#$[]".contains($0) }) else { return nil }
        return Post(snapshot: try await feeds.ref.child("posts").child(postID).getData())
    }

    private func list(_ title: String, _ posts: [Post]) {
        say("\(title): \(posts.count)")
        for post in posts { say("  " + Feeds.line(post)) }
    }

    /// The first word and the rest of the line.
    static func split(_ line: String) -> (String, String) {
        guard let space = line.firstIndex(of: " ") else { return (line, "") }
        return (String(line[..<space]), line[line.index(after: space)...].trimmingCharacters(in: .whitespaces))
    }
}
