import CanopyCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import CanopyServer

/// The data browser's files are real files (`Sources/CanopyServer/Browser/Assets`), embedded in
/// the binary at build time by the `EmbedBrowserAssets` plugin: what the server holds and serves
/// is each file as it is in the repository, byte for byte, and nothing else.
@Suite("Data browser assets")
struct BrowserAssetTests {
    /// `Sources/CanopyServer/Browser/Assets` in this checkout.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/CanopyServer/Browser/Assets")

    /// The repository's files, by the name the server serves each under (`""` for `index.html`).
    static func files() throws -> [String: [UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        var files: [String: [UInt8]] = [:]
        for name in names {
            let data = try Data(contentsOf: directory.appendingPathComponent(name))
            files[name == "index.html" ? "" : name] = Array(data)
        }
        return files
    }

    /// Where `served` differs from the repository's `file` (`nil` when they are the same bytes):
    /// their sizes and the first byte that differs, rather than both files in full.
    static func difference(_ served: [UInt8]?, _ file: [UInt8]) -> String? {
        guard let served else { return "not there" }
        guard served != file else { return nil }
        let common = min(served.count, file.count)
        let first = (0..<common).first { served[$0] != file[$0] } ?? common
        return "\(served.count) bytes against the file's \(file.count), first different at byte \(first)"
    }

    @Test("the embedded table is the repository's Browser/Assets, file for file, byte for byte")
    func embeddedEqualsRepository() throws {
        let files = try Self.files()
        #expect(files.keys.contains("") && files.keys.contains("app.js") && files.keys.contains("style.css"))
        #expect(Set(BrowserAsset.all.keys) == Set(files.keys))
        for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
            let difference = Self.difference(BrowserAsset.all[name].map { Array($0.text.utf8) }, bytes)
            #expect(difference == nil, "the embedded \"\(name)\" differs from the file: \(difference ?? "")")
        }
        let types = Dictionary(uniqueKeysWithValues: BrowserAsset.all.map { ($0.key, $0.value.contentType) })
        #expect(types[""] == "text/html; charset=utf-8")
        #expect(types["style.css"] == "text/css; charset=utf-8")
        #expect(types.filter { $0.key.hasSuffix(".js") }.values.allSatisfy { $0 == "text/javascript; charset=utf-8" })
    }

    @Test("/_/ and each file beside it answer the repository's file, byte for byte")
    func servedEqualsRepository() async throws {
        let files = try Self.files()
        let server = makeServer()
        try await server.makeApplication().test(.router) { client in
            for (name, bytes) in files.sorted(by: { $0.key < $1.key }) {
                try await client.execute(uri: "/_/\(name)", method: .get) { (r: TestResponse) throws in
                    #expect(r.status == .ok)
                    #expect(r.headers[.contentLength] == "\(bytes.count)")
                    let difference = Self.difference(Array(buffer: r.body), bytes)
                    #expect(difference == nil, "/_/\(name) differs from its file in Browser/Assets: \(difference ?? "")")
                }
            }
        }
        await server.store.close()
    }
}
