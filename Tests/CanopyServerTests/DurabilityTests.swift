import Canopy
import CanopyServer
import Foundation
import Testing

@Suite("Durable namespaces")
struct DurabilityTests {
    @Test("each namespace is a database under the directory; answered writes are there after a restart")
    func restart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("canopy-server-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func server() -> CanopyServer {
            var configuration = ServerConfiguration()
            configuration.port = 0
            return CanopyServer(configuration: configuration, store: NamespaceStore(directory: directory))
        }
        try await withLiveServer(server()) { (port: Int) async throws in
            #expect(try await StreamTests.request(port, "PUT", "/a.json?ns=one", #"{"b": 1}"#).status == 200)
            #expect(try await StreamTests.request(port, "PATCH", "/.json", #"{"x/y": true}"#).status == 200)
            #expect(
                try await StreamTests.request(port, "PUT", "/.settings/rules.json?ns=one", Self.rules).status
                    == 200)
        }
        #expect(FileManager.default.fileExists(atPath: directory + "/one"))
        #expect(FileManager.default.fileExists(atPath: directory + "/default"))
        // The rules went through a temporary file, renamed over the kept one.
        #expect(FileManager.default.fileExists(atPath: directory + "/one.rules.json"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/one.rules.json.tmp"))
        try await withLiveServer(server()) { (port: Int) async throws in
            #expect(try json(try await StreamTests.request(port, "GET", "/.json?ns=one").body) == ["a": ["b": 1]])
            #expect(try json(try await StreamTests.request(port, "GET", "/.json").body) == ["x": ["y": true]])
            #expect(try await StreamTests.request(port, "GET", "/.settings/rules.json?ns=one").body == Self.rules)
            // The kept rules are in force: they allow no writes.
            #expect(try await StreamTests.request(port, "PUT", "/a.json?ns=one", "2").status == 401)
        }
    }

    static let rules = #"{"rules": {".read": true, "a": {".indexOn": "b"}}}"#
}
