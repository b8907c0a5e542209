import CanopyRemote
import CanopyServer
import Foundation

// The Firebase Realtime Database quickstart's blog (users, posts, stars and comments) on an
// embedded Canopy database.
//
//   swift run BlogPosts                      a short scripted scene, then a summary
//   swift run BlogPosts --interactive        a prompt (type help)
//   swift run BlogPosts --serve 9000         also serve the database over HTTP
//   swift run BlogPosts --url URL            the same blog against a running `canopy serve`
//                                            (Database(url:)), e.g. http://127.0.0.1:9000?ns=blog;
//                                            --token TOKEN signs in (CANOPY_TOKEN also works)
//   --db DIR                                 the database directory (default .canopy/blog)

var dbPath = ".canopy/blog"
var interactive = false
var servePort: Int?
var serverURL: String?
var token = ProcessInfo.processInfo.environment["CANOPY_TOKEN"]
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--db":
        guard let value = arguments.popFirst() else { fail("--db needs a directory") }
        dbPath = value
    case "--interactive":
        interactive = true
    case "--serve":
        guard let value = arguments.popFirst(), let port = Int(value), (0...65535).contains(port) else { fail("--serve needs a port") }
        servePort = port
    case "--url":
        guard let value = arguments.popFirst() else { fail("--url needs a server URL, e.g. http://127.0.0.1:9000?ns=blog") }
        serverURL = value
    case "--token":
        guard let value = arguments.popFirst() else { fail("--token needs a token") }
        token = value
    case "-h", "--help":
        say("usage: BlogPosts [--db DIR | --url URL [--token TOKEN]] [--interactive] [--serve PORT]")
        exit(0)
    default:
        fail("unknown argument \(argument) (usage: BlogPosts [--db DIR | --url URL [--token TOKEN]] [--interactive] [--serve PORT])")
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("BlogPosts: \(message)\n".utf8))
    exit(2)
}

// With --serve the server opens the directory (as namespace DIR's last component, in its parent
// directory) and the blog uses the server's Database: one opener, the same live data.
let database: Database
var server: CanopyServer?
var serverTask: Task<Void, any Error>?
do {
    if let serverURL {
        if servePort != nil { fail("--url and --serve do not go together: the server is elsewhere") }
        var configuration = Database.Configuration()
        configuration.authToken = token
        database = try Database(url: serverURL, configuration: configuration)
        say("connected to \(serverURL) (Database(url:))")
    } else if let servePort {
        let url = URL(fileURLWithPath: dbPath).standardizedFileURL
        let namespace = url.lastPathComponent
        guard NamespaceStore.isValidName(namespace) else {
            fail("with --serve the directory name must be a namespace name (letters, digits, - or _)")
        }
        var configuration = ServerConfiguration()
        configuration.port = servePort
        configuration.defaultNamespace = namespace
        let store = NamespaceStore(directory: url.deletingLastPathComponent().path)
        database = try await store.database(namespace)
        let started = CanopyServer(configuration: configuration, store: store)
        server = started
        serverTask = Task { try await started.run() }
        guard let port = await started.listeningPort() else { fail("the server did not start") }
        say("serving \(url.path) on http://127.0.0.1:\(port) (try: canopy observe --url http://127.0.0.1:\(port) /posts)")
    } else {
        database = try Database.database(path: dbPath)
    }
} catch {
    fail("cannot open \(serverURL ?? dbPath): \(error)")
}

var status: Int32 = 0
do {
    if interactive {
        var session = Interactive(database: database)
        try await session.run(prompt: isatty(0) != 0)
    } else {
        try await Scene(database: database).run()
        let result = try await Invariants.check(database)
        say("summary: \(result.users) users, \(result.posts) posts, \(result.stars) stars, \(result.comments) comments")
        if result.violations.isEmpty {
            say("invariants ok: every post equals its /user-posts copy, every starCount equals its stars")
        } else {
            for violation in result.violations { say("INVARIANT VIOLATED: \(violation)") }
            status = 1
        }
    }
} catch {
    say("error: \(error)")
    status = 1
}

if let server, let serverTask {
    if !interactive {
        say("still serving; Ctrl-C to stop")
    } else {
        await server.shutdown()
    }
    _ = try? await serverTask.value
} else {
    database.close()
}
exit(status)
