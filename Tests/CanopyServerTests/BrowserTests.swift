import CanopyCore
import CanopyServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The data browser `canopy serve` answers at `/_/`: its files and headers, that it leaves the
/// REST API alone, and the page itself in a real headless Chromium (Selenium), against live
/// servers.
@Suite("Data browser")
struct BrowserTests {
    @Test("/_/ serves the page and its modules with strict headers; a browser's GET / is redirected there")
    func page() async throws {
        try await withTestServer(.router) { client in
            try await client.execute(uri: "/_/", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(r.headers[.contentType] == "text/html; charset=utf-8")
                #expect(r.headers[.cacheControl] == "no-cache")
                #expect(r.headers[.xContentTypeOptions] == "nosniff")
                let csp = r.headers[.contentSecurityPolicy] ?? ""
                #expect(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && csp.contains("connect-src 'self'"))
                #expect(!csp.contains("unsafe-inline") && !csp.contains("http"))
                let html = String(buffer: r.body)
                #expect(html.contains(#"<script type="module" src="/_/app.js">"#))
                // Nothing from another site: the page works with no internet.
                #expect(!html.contains("http://") && !html.contains("https://"))
            }
            for (file, type) in [("app.js", "text/javascript"), ("tree.js", "text/javascript"), ("style.css", "text/css")] {
                try await client.execute(uri: "/_/\(file)", method: .get) { (r: TestResponse) throws in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentType] == "\(type); charset=utf-8")
                    #expect(r.body.readableBytes > 500)
                    #expect(!String(buffer: r.body).contains("https://"))
                }
            }
            try await client.execute(uri: "/_/app.js", method: .head) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(r.body.readableBytes == 0)
            }
            try await client.execute(uri: "/_/nothing.js", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .notFound)
                #expect(String(buffer: r.body).contains("the data browser is at /_/"))
            }
            try await client.execute(uri: "/", method: .get, headers: [.accept: "text/html,application/xhtml+xml"]) {
                (r: TestResponse) throws in
                #expect(r.status == .found)
                #expect(r.headers[.location] == "/_/")
            }
        }
    }

    @Test("REST is unchanged: `/`, `/_.json` and `/_/x.json` are still REST, writes under /_/ are REST")
    func noCollision() async throws {
        try await withTestServer(.router) { client in
            // A REST client asking for `/` (no Accept: text/html) gets the REST error it always got.
            try await client.execute(uri: "/", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("end in .json"))
            }
            try await client.execute(uri: "/_/app.json", method: .put, body: body(#"{"x": 1}"#)) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/_/app.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["x": 1])
            }
            try await client.execute(uri: "/_.json", method: .get) { (r: TestResponse) throws in
                #expect(try json(r.body) == ["app": ["x": 1]])
            }
            // Only GET and HEAD are the browser's: a PUT to /_/app.js is a REST request (refused as one).
            try await client.execute(uri: "/_/app.js", method: .put, body: body("1")) { (r: TestResponse) throws in
                #expect(r.status == .badRequest)
                #expect(String(buffer: r.body).contains("end in .json"))
            }
        }
    }

    @Test("/.inspect/databases.json lists the namespaces; only the administrator may, on a guarded server")
    func namespaces() async throws {
        try await withTestServer(.router) { client in
            try await client.execute(uri: "/a.json?ns=zeta", method: .put, body: body("1")) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/.inspect/databases.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == [["name": "default"], ["name": "zeta"]])
            }
            try await client.execute(uri: "/.inspect/databases.json", method: .delete) { (r: TestResponse) throws in
                #expect(r.status == .methodNotAllowed)
            }
        }
        try await withTestServer(.router, { $0.authToken = "admin-secret" }) { client in
            try await client.execute(uri: "/.inspect/databases.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .unauthorized)
            }
            try await client.execute(uri: "/.inspect/databases.json?auth=admin-secret", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
                #expect(try json(r.body) == [["name": "default"]])
            }
            // The page itself is public (it holds no data); what it reads is guarded as usual.
            try await client.execute(uri: "/_/", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .ok)
            }
            try await client.execute(uri: "/.json", method: .get) { (r: TestResponse) throws in
                #expect(r.status == .unauthorized)
            }
        }
    }

    @Test(
        "in headless Chromium: expand, edit, add, push, delete, import, export, live REST writes, query, paging 100k children, rules, reconnect, token, keyboard actions, links to a location",
        .enabled(if: BrowserClient.runnable, BrowserClient.skipReason)
    )
    func inChromium() async throws {
        let token = "browser-test-admin-token"
        let development = makeServer()
        // Its largest answer is too small for the root's first page (which holds 100,000
        // children): the page falls back to listing the root's keys.
        let guarded = makeServer {
            $0.authToken = token
            $0.maxResponseBytes = 512 << 10
        }
        let artifacts = BrowserClient.artifacts
        try await withLiveServer(development) { port in
            try await withLiveServer(guarded) { guardedPort in
                try await PythonClient.run(
                    "browser_interop",
                    [
                        "--url", "http://127.0.0.1:\(port)", "--guarded-url", "http://127.0.0.1:\(guardedPort)", "--token", token,
                        "--artifacts", artifacts, "--guarded-small-buffer",
                    ],
                    expecting: "browser: all checks passed", timeout: .seconds(600))
            }
        }
        for name in ["tree.png", "actions.png", "address.png", "query-dark.png", "paging.png", "rules.png"] {
            #expect(FileManager.default.fileExists(atPath: "\(artifacts)/\(name)"), "no screenshot \(name) in \(artifacts)")
        }
    }
}

/// What the browser test needs besides ``PythonClient``: Chromium and its driver (Debian's
/// `chromium` and `chromium-driver`) and Selenium in the interop venv (`.ci/run` installs them).
enum BrowserClient {
    static let chromium = ProcessInfo.processInfo.environment["CANOPY_CHROMIUM"] ?? "/usr/bin/chromium"
    static let driver = ProcessInfo.processInfo.environment["CANOPY_CHROMEDRIVER"] ?? "/usr/bin/chromedriver"

    /// Runs when CI requires it (a missing browser then fails the test) or when everything is there.
    static var runnable: Bool {
        PythonClient.required
            || (PythonClient.python != nil && FileManager.default.isExecutableFile(atPath: Self.chromium)
                && FileManager.default.isExecutableFile(atPath: Self.driver))
    }

    static let skipReason: Comment =
        "needs CANOPY_INTEROP_PYTHON (with selenium), chromium and chromedriver (CANOPY_REQUIRE_INTEROP=1 makes their absence a failure)"

    /// Where the screenshots go: `CANOPY_TEST_ARTIFACTS/browser`, or `.build/test-artifacts/browser`.
    static var artifacts: String {
        if let root = ProcessInfo.processInfo.environment["CANOPY_TEST_ARTIFACTS"], !root.isEmpty { return "\(root)/browser" }
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return package.appendingPathComponent(".build/test-artifacts/browser").path
    }
}
