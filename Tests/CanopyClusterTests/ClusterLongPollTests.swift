import CanopyCluster
import CanopyCore
import CanopyRemote
import CanopyTestSupport
import Foundation
import Testing

/// The browser SDK's long polling in a cluster: a start at a node that does not lead the namespace
/// gets the redirect a WebSocket gets; at the leader, the hello.
@Suite(ClusterHarness.needed(), .timeLimit(.minutes(3)))
struct ClusterLongPollTests {
    /// GET `target` from `host:port`; the whole response.
    static func get(host: String, port: Int, _ target: String) throws -> String {
        try NodeHTTP.request("GET", host: host, port: port, target).raw
    }

    @Test func aStartAtAnotherNodeIsRedirectedToTheLeader() async throws {
        try await ClusterHarness.withDatabase { configuration in
            try await ServeProcess.withNodes(2, configuration) { _, port in
                // Node 1 takes the namespace with a write.
                let client = try ClusterRemoteClientTests.remote("http://127.0.0.1:\(port)?ns=polled")
                defer { client.close() }
                _ = try await client.reference(withPath: "x").setValue(1)

                let redirected = try Self.get(host: "127.0.0.2", port: port, "/.lp?start=t&ser=1&cb=1&v=5&ns=polled")
                #expect(redirected.hasPrefix("HTTP/1.1 200"), "\(redirected)")
                #expect(redirected.contains(#"{"t":"c","d":{"t":"r","d":"127.0.0.1:\#(port)"}}"#), "\(redirected)")
                #expect(!redirected.contains(#""t":"h""#), "no hello from a node that does not lead")

                let served = try Self.get(host: "127.0.0.1", port: port, "/.lp?start=t&ser=2&cb=2&v=5&ns=polled")
                #expect(served.contains(#""t":"h""#) && served.contains(#""h":"127.0.0.1:\#(port)""#), "\(served)")
                #expect(!served.contains(#""t":"r""#))
            }
        }
    }
}
