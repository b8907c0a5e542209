import CanopyCore
import CanopyRules
import Testing

@testable import CanopyServer

/// The batch a follower sends its leader (``ForwardedWrites``): requests encoded one by one and
/// joined into a body decode to what was sent.
@Suite("Forwarded writes codec")
struct ForwardedWritesTests {
    @Test func aBatchOfSeparatelyEncodedRequestsDecodesToTheRequests() throws {
        var conditional = ClientWrite(
            write: .set(DatabasePath(["users", "ada"]), WriteValue(node: .leaf(.string("Ada")))),
            identity: .user(AuthContext(uid: "ada"), expires: 1_700_000_000_000))
        conditional.condition = .etag("etag-1")
        conditional.wantsNode = true
        var transaction = ClientWrite(
            write: .set(DatabasePath(["counter"]), WriteValue(node: .leaf(.int(7)))), identity: .admin)
        transaction.condition = .hash("h1")
        transaction.reads = [(DatabasePath(["a"]), "ha"), (DatabasePath(["b", "c"]), "hb")]
        transaction.registration = 12
        let anonymous = ClientWrite(write: .set(DatabasePath(["log"]), WriteValue(node: .empty)), identity: .anonymous)
        let requests = [
            ForwardedWrites.Request(write: conditional, session: nil),
            ForwardedWrites.Request(write: transaction, session: "s1"),
            ForwardedWrites.Request(write: anonymous, session: nil),
        ]

        let body = ForwardedWrites.body(requests.map(ForwardedWrites.encode), node: 3)
        let (node, decoded) = try ForwardedWrites.decode(body)
        #expect(node == 3)
        try #require(decoded.count == 3)
        #expect(decoded.map(\.session) == [nil, "s1", nil])
        #expect(decoded.map(\.write.identity) == [.user(AuthContext(uid: "ada"), expires: 1_700_000_000_000), .admin, .anonymous])
        #expect(decoded.map(\.write.condition) == [.etag("etag-1"), .hash("h1"), ClientWrite.Condition.none])
        #expect(decoded.map(\.write.wantsNode) == [true, false, false])
        #expect(decoded.map(\.write.registration) == [nil, 12, nil])
        #expect(decoded[1].write.reads.map(\.path.string) == ["/a", "/b/c"])
        #expect(decoded[1].write.reads.map(\.hash) == ["ha", "hb"])
        #expect(decoded.map(\.write.write.path.string) == ["/users/ada", "/counter", "/log"])
        #expect(decoded.map { $0.write.write.entries.map(\.value.node) } == [[.leaf(.string("Ada"))], [.leaf(.int(7))], [.empty]])

        // An empty batch is a valid body too.
        let empty = try ForwardedWrites.decode(ForwardedWrites.body([], node: 1))
        #expect(empty.node == 1 && empty.requests.isEmpty)
    }
}
