import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation
import Testing

/// Runs the built `BlogPosts` sample and checks what it printed and what it left in its database.
@Suite("BlogPosts sample")
struct BlogPostsTests {
    /// The sample built beside this test bundle.
    static var binaryPath: String { builtExecutable("BlogPosts") }

    /// Runs the sample with `arguments`, feeding it `input`; returns its exit status and output.
    static func run(_ arguments: [String], input: String = "") throws -> (status: Int32, output: String) {
        let run = try runToExit(
            binaryPath, arguments, waitingFor: "BlogPosts \(arguments.joined(separator: " ")) to exit", input: input,
            mergeStandardError: true)
        return (run.status, run.stdout)
    }

    /// Checks that every post equals its copy and that every star count is its number of stars;
    /// returns the posts.
    static func checkInvariants(_ root: DataSnapshot) -> [DataSnapshot] {
        let posts = root.childSnapshot(forPath: "posts").childSnapshots
        for post in posts {
            let value = post.value as? [String: Any] ?? [:]
            let uid = value["uid"] as? String ?? ""
            let copy = root.childSnapshot(forPath: "user-posts/\(uid)/\(post.key ?? "")")
            #expect(copy.exists())
            #expect(copy.json == post.json)
            let stars = value["stars"] as? [String: Bool] ?? [:]
            #expect(value["starCount"] as? Int == stars.count)
        }
        return posts
    }

    @Test("the scripted scene shows the live feeds, keeps its invariants and runs twice")
    func scene() async throws {
        let directory = TemporaryDirectory("blogposts")
        defer { directory.remove() }
        let dbPath = directory.file("blog")
        for run in 1...2 {
            let (status, output) = try Self.run(["--db", dbPath])
            #expect(status == 0, "\(output)")
            for expected in [
                "[users] ada signed up", "[recent posts] new: \"grace's post #1\" by grace", "[comments on", "(deleted)", "moved",
                "summary: \(3 * run) users, \(6 * run) posts", "invariants ok",
            ] {
                #expect(output.contains(expected), "missing \(expected) in \(output)")
            }
        }

        let db = try Database(path: dbPath)
        defer { db.close() }
        let root = try await db.reference().getData()
        let posts = Self.checkInvariants(root)
        #expect(posts.count == 12)
        #expect(root.childSnapshot(forPath: "users").childrenCount == 6)
        // Each run: 6 comments, one deleted; 2 stars on each first post, 1 on each second post.
        let comments = root.childSnapshot(forPath: "post-comments").childSnapshots.reduce(0) { $0 + Int($1.childrenCount) }
        #expect(comments == 10)
        let stars = posts.reduce(0) { $0 + (($1.value as? [String: Any])?["stars"] as? [String: Bool] ?? [:]).count }
        #expect(stars == 18)

        // Recent posts: push-key (creation) order.
        let recent = try await db.reference(withPath: "posts").queryLimited(toFirst: 100).getData()
        let keys = recent.childSnapshots.compactMap(\.key)
        #expect(keys == keys.sorted())
        #expect(keys.count == 12)
        // Top posts of each user: ascending star counts.
        for user in root.childSnapshot(forPath: "user-posts").childSnapshots {
            let top = try await db.reference(withPath: "user-posts/\(user.key ?? "")").queryOrdered(byChild: "starCount").getData()
            let counts = top.childSnapshots.map { ($0.value as? [String: Any])?["starCount"] as? Int ?? -1 }
            #expect(counts == counts.sorted())
            #expect(counts == [1, 2])
        }
    }

    @Test("--url runs the same scene, unchanged, against a running server (Database(url:))")
    func sceneAgainstServer() async throws {
        var configuration = ServerConfiguration()
        configuration.port = 0
        let server = CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil))
        try await server.serving(on: testServerExecutor) { port in
            let url = "http://127.0.0.1:\(port)?ns=blog"
            for run in 1...2 {
                // Waiting for the sample blocks a thread: not one of the few Swift concurrency runs on, which
                // the server in this process needs to answer the sample.
                let (status, output) = try await withCheckedThrowingContinuation { continuation in
                    Thread { continuation.resume(with: Result { try Self.run(["--url", url]) }) }.start()
                }
                #expect(status == 0, "\(output)")
                for expected in [
                    "connected to \(url)", "[users] ada signed up", "[recent posts] new: \"grace's post #1\" by grace", "(deleted)",
                    "moved",
                    "summary: \(3 * run) users, \(6 * run) posts", "invariants ok",
                ] {
                    #expect(output.contains(expected), "missing \(expected) in \(output)")
                }
            }
            // What the server holds, read by another client.
            let db = try Database(url: url)
            let root = try await db.reference().getData()
            db.close()
            #expect(Self.checkInvariants(root).count == 12)
            #expect(root.childSnapshot(forPath: "users").childrenCount == 6)
        }
    }

    @Test("--interactive answers each command and writes the blog")
    func interactive() async throws {
        let directory = TemporaryDirectory("blogposts")
        defer { directory.remove() }
        let dbPath = directory.file("blog")

        let first = try Self.run(["--db", dbPath, "--interactive"], input: "user ada\npost Hello | First body\npost Second | More\nmine\n")
        #expect(first.status == 0, "\(first.output)")
        let lines = first.output.split(separator: "\n").map(String.init)
        let posted = lines.filter { $0.hasPrefix("posted ") }.map { $0.split(separator: " ")[1] }
        #expect(posted.count == 2)
        guard posted.count == 2 else { return }
        let (hello, second) = (String(posted[0]), String(posted[1]))
        #expect(
            lines == [
                "signed in as guest",
                "signed in as ada",
                "posted \(hello) \"Hello\"",
                "posted \(second) \"Second\"",
                "posts of ada: 2",
                "  \(hello) \"Hello\" by ada, 0 stars",
                "  \(second) \"Second\" by ada, 0 stars",
                "bye",
            ])

        let script = """
            user grace
            star \(second)
            comment \(hello) Welcome, ada!
            user linus
            star \(second)
            star \(hello)
            star \(hello)
            star nosuchpost
            recent
            user ada
            top
            help
            frobnicate
            quit
            mine
            """
        let secondRun = try Self.run(["--db", dbPath, "--interactive"], input: script)
        #expect(secondRun.status == 0, "\(secondRun.output)")
        let out = secondRun.output
        #expect(out.contains("starred \(second) (1 star)\n"))
        #expect(out.contains("starred \(second) (2 stars)\n"))
        #expect(out.contains("starred \(hello) (1 star)\nunstarred \(hello) (0 stars)\n"))
        #expect(out.contains("no post nosuchpost\n"))
        #expect(out.contains("commented "))
        #expect(out.contains("recent posts: 2\n  \(hello) \"Hello\" by ada, 0 stars\n  \(second) \"Second\" by ada, 2 stars\n"))
        #expect(out.contains("top posts of ada: 2\n  \(second) \"Second\" by ada, 2 stars\n  \(hello) \"Hello\" by ada, 0 stars\n"))
        #expect(out.contains("commands:"))
        #expect(out.contains("unknown command \"frobnicate\""))
        #expect(out.hasSuffix("bye\n"))
        #expect(!out.contains("\nposts of ada"))  // `mine` after quit is not read

        let db = try Database(path: dbPath)
        defer { db.close() }
        let root = try await db.reference().getData()
        let posts = Self.checkInvariants(root)
        #expect(posts.count == 2)
        #expect(root.childSnapshot(forPath: "posts/\(second)/stars").value as? [String: Bool] == ["grace": true, "linus": true])
        #expect(root.childSnapshot(forPath: "users").childSnapshots.compactMap(\.key) == ["ada", "grace", "guest", "linus"])
        let comments = root.childSnapshot(forPath: "post-comments/\(hello)").childSnapshots
        #expect(comments.count == 1)
        #expect(comments.first?.childSnapshot(forPath: "text").value as? String == "Welcome, ada!")
        #expect(comments.first?.childSnapshot(forPath: "author").value as? String == "grace")
    }
}
