import Foundation
import NIOCore
import NIOPosix

/// B12.http.writes: B10's workload (50 keep-alive clients share 200,000 small PUTs) on blog
/// posts, `PUT /posts/c<client>-k<i % 100>.json` with `{"author": uid, "title": "t",
/// "starCount": i}`. With rules the server child has the blog's rules and verifies HS256 user
/// tokens, and each client sends its own user's token (`auth=`); without, it is the open
/// development server and the requests carry no token. Every write must be answered 2xx. The
/// namespace is opened (by the admin, with rules) before timing.
func rulesHTTPWrites(_ mode: RulesMode, _ store: Store) throws -> BenchResult {
    let name = "B12.http.writes.\(mode.rawValue)"
    let clients = 50
    let total = Bench.scaled(200_000)
    return try withServerChild(store, rules: mode == .rules) { server, group in
        let port = server.port
        let perClient = (total + clients - 1) / clients
        let issued = SharedCounter()
        let auth = (0..<clients).map { client in
            mode == .rules ? "&auth=" + hs256Token(uid: BlogRules.clientUser(client), secret: BlogRules.secret) : ""
        }
        // Open the namespace before timing: on a guarded server only the admin may (users get 401).
        let opened = try blocking {
            try await fetch(port: port, mode == .rules ? "/posts.json?auth=\(BlogRules.adminToken)" : "/posts.json")
        }
        guard opened == "null" else { throw BenchError("opening the namespace answered \(opened)") }
        log("\(name): \(clients) clients, \(total) writes")
        let start = monotonicNanos()
        let outcomes: [(client: Int, outcome: Result<Int, any Error>)] = try blocking {
            try await withThrowingTaskGroup(of: (Int, Result<Int, any Error>).self) { tasks in
                for client in 0..<clients {
                    let user = BlogRules.clientUser(client)
                    let token = auth[client]
                    tasks.addTask {
                        let outcome = try await httpLoad(port: port, group: group) { i in
                            guard i < perClient, issued.next() < total else { return nil }
                            return httpRequest(
                                "PUT", "/posts/\(user)-k\(i % 100).json?print=silent\(token)",
                                body: "{\"author\":\"\(user)\",\"title\":\"t\",\"starCount\":\(i)}")
                        }
                        return (client, outcome)
                    }
                }
                var all: [(client: Int, outcome: Result<Int, any Error>)] = []
                for try await outcome in tasks { all.append(outcome) }
                return all
            }
        }
        let seconds = secondsSince(start)
        var done = 0
        var expectedPosts = 0
        var failures: [String] = []
        for (_, outcome) in outcomes {
            switch outcome {
            case .success(let n):
                done += n
                expectedPosts += min(n, 100)
            case .failure(let error): failures.append("\(error)")
            }
        }
        let check: String
        if !failures.isEmpty {
            let refused = failures.contains { $0.contains("401") } ? " (401: the rules refused a write)" : ""
            check = "FAIL \(failures.count) connections failed\(refused): \(failures[0])"
        } else if done != total {
            check = "FAIL \(done) of \(total) writes answered"
        } else {
            let text = try blocking { try await fetch(port: port, "/posts.json") }
            check = checkPosts(text, expected: expectedPosts)
        }
        return BenchResult(
            scenario: name, store: store, n: done, seconds: seconds,
            extra: [
                ("rules", .bool(mode == .rules)), ("writes_per_s", .int(Int((Double(done) / seconds).rounded()))),
                ("clients", .int(clients)), ("posts", .int(expectedPosts)),
            ],
            check: check)
    }
}

/// Checks the server's `/posts` (as JSON text): `expected` posts, each carrying its writer as
/// author (the key's prefix).
private func checkPosts(_ text: String, expected: Int) -> String {
    guard let posts = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
        return "FAIL /posts is not an object: \(text.prefix(200))"
    }
    guard posts.count == expected else { return "FAIL \(posts.count) posts on the server, expected \(expected)" }
    for (key, value) in posts {
        let writer = key.split(separator: "-").first.map(String.init)
        guard let post = value as? [String: Any], let author = post["author"] as? String, author == writer else {
            return "FAIL post \(key) does not carry its author"
        }
    }
    return "ok"
}
