import Canopy
import CanopyCore
import CanopyServer
import Testing

/// The bugs fuzzing found, as plain tests (their inputs are also in Tests/Fuzz/Regressions).
@Suite struct FuzzFindingsTests {
    /// `"/\u{7A8}"` is one Character ("/" and a combining mark): splitting paths on Characters
    /// kept the slash inside a key, so a path's printed form did not parse back.
    @Test func aSlashBeforeACombiningMarkSeparatesKeys() throws {
        let path = try DatabasePath(validating: "a/\u{301}b/\u{7A8}", function: "child")
        #expect(path.keys.map(\.string) == ["a", "\u{301}b", "\u{7A8}"])
        #expect(try DatabasePath(validating: path.string, function: "child") == path)
    }

    @Test func restSplitsTheSameWay() async throws {
        let server = CanopyServer(configuration: ServerConfiguration(), store: NamespaceStore(directory: nil))
        let put = try #require(await server.respond(method: "PUT", target: "/a/%CC%81b.json", body: Array("1".utf8)))
        #expect(put.status == 200)
        let get = try #require(await server.respond(method: "GET", target: "/a.json"))
        #expect(String(decoding: get.body, as: UTF8.self) == "{\"\u{301}b\":1}")
        await server.store.close()
    }

    /// Setting the priority of a location without data is the caller's mistake: 400, not the
    /// 503 of a server that cannot write.
    @Test func priorityOfAMissingNodeIs400() async throws {
        let server = CanopyServer(configuration: ServerConfiguration(), store: NamespaceStore(directory: nil))
        let response = try #require(await server.respond(method: "PUT", target: "/missing/.priority.json", body: Array("7".utf8)))
        #expect(response.status == 400)
        #expect(
            String(decoding: response.body, as: UTF8.self)
                == #"{"error":"setPriority failed: there is no data at /missing to set a priority on."}"#)
        let get = try #require(await server.respond(method: "GET", target: "/.json"))
        #expect(String(decoding: get.body, as: UTF8.self) == "null")
        await server.store.close()
    }

    /// Any client may name a namespace; past the store's limit a new one is refused.
    @Test func namespacesAreBounded() async throws {
        let server = CanopyServer(configuration: ServerConfiguration(), store: NamespaceStore(directory: nil, maxNamespaces: 2))
        #expect(await server.respond(method: "GET", target: "/.json?ns=one")?.status == 200)
        #expect(await server.respond(method: "GET", target: "/.json?ns=two")?.status == 200)
        let third = try #require(await server.respond(method: "GET", target: "/.json?ns=three"))
        #expect(third.status == 403)
        #expect(
            String(decoding: third.body, as: UTF8.self)
                == #"{"error":"Namespace \"three\" would be one more than the 2 this server serves at once."}"#)
        #expect(await server.respond(method: "GET", target: "/.json?ns=one")?.status == 200)
        await server.store.close()
    }
}
