import CanopyRemote
import CanopyServer
import CanopyTestSupport
import Foundation
import Testing

/// `Database(url:)` on a location far larger than the server's live-event buffer: a
/// listen gets the value whole, then the writes after it; `getData()` reads it too.
@Suite("Database(url:): large locations", .serialized)
struct RemoteLargeValueTests {
    static let filler = String(repeating: "x", count: 170)
    static let children = 150_000

    static func key(_ i: Int) -> String { "c\(1_000_000 + i)" }

    /// About 30 MB of JSON in 150,000 children, as written.
    static var value: [String: Any] {
        Dictionary(
            uniqueKeysWithValues: (0..<children).map { (key($0), ["n": $0, "t": filler] as [String: Any]) })
    }

    /// The same, as it reads back.
    static let expected: JSONValue = .object(
        Dictionary(uniqueKeysWithValues: (0..<children).map { (key($0), JSONValue.object(["n": .int(Int64($0)), "t": .string(filler)])) }))

    @Test("observing 30 MB gets the exact value, then the writes after it in order; getData() reads it whole")
    func observeAndRead() async throws {
        try await TestServer.serving { server in
            let url = server.url()
            let writer = try Database(url: url)
            defer { writer.close() }
            try await writer.reference(withPath: "big").setValue(Self.value)

            let observer = try Database.remoteForTest(url)
            defer { observer.close() }
            let big = observer.reference(withPath: "big")
            let values = Collected<JSONValue>()
            let changes = Collected<JSONValue>()
            let handle = big.observe(.value) { values.append($0.exportJSON) }
            big.observe(.childChanged) { changes.append($0.exportJSON) }
            let child = Self.key(7)
            // One thread drives the observer's loop from start to end (a manual loop is drained by
            // the thread that drained it first).
            try await onOwnThread {
                try observer.drain(until: "the value of /big", seconds: 120) { !values.items.isEmpty }
                #expect(values.items.count == 1)
                #expect(values.items[0] == Self.expected)
                // Keep the listen (the child observer), not the whole value's re-exports.
                big.removeObserver(withHandle: handle)
                // Three writes from one thread go out in order; their outcome is the events below.
                for n in 100..<103 { writer.reference(withPath: "big/\(child)/n").setValue(n) { _, _ in } }
                try observer.drain(until: "three changes", seconds: 60) { changes.items.count >= 3 }
                #expect(changes.items == (100..<103).map { .object(["n": .int(Int64($0)), "t": .string(Self.filler)]) })
            }

            // 30 MB on a busy two-core machine: the read's timeout is a hang guard here.
            var patient = Database.Configuration()
            patient.requestTimeout = .seconds(120)
            let reader = try Database(url: url, configuration: patient)
            defer { reader.close() }
            let read = try await reader.reference(withPath: "big").getData()
            var after = Self.expected
            if case .object(var members) = after {
                members[child] = .object(["n": .int(102), "t": .string(Self.filler)])
                after = .object(members)
            }
            #expect(read.exportJSON == after)
        }
    }
}
