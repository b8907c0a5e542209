import CanopyCore
import Testing

extension StreamTests {
    /// Opens an event stream on `/users/alice.json` signed in with `token` and checks that it is
    /// accepted, starts with `{"n": 1}` (already written there), and then gets alice's write of
    /// `n = 2` as its next event (not `auth_revoked`). Closes the stream after.
    static func expectAliceStreamFollowsHerWrites(
        _ port: Int, token: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let stream = try await EventStreamClient.open(port: port, "/users/alice.json?auth=\(token)")
        #expect(stream.head.status == 200, sourceLocation: sourceLocation)
        try await Self.expectEvent(stream, "put", "/", ["n": 1], sourceLocation: sourceLocation)
        let write = try await Self.request(port, "PUT", "/users/alice/n.json?auth=\(token)", "2")
        #expect(write.status == 200, sourceLocation: sourceLocation)
        // Next on the stream: the change, not `auth_revoked`.
        try await Self.expectEvent(stream, "put", "/n", 2, sourceLocation: sourceLocation)
        await stream.connection.close()
    }
}
