import CanopyCore
import Testing

@testable import CanopyWire

/// The client's reader, checked against the server's writer and the JS SDK's captured frames.
@Suite("Reading the server's messages")
struct ServerEventTests {
    static let posts = DatabasePath(["posts"])

    static func event(_ bytes: [UInt8]) throws -> ServerEvent { try ServerEvent(parsing: String(decoding: bytes, as: UTF8.self)) }

    static func node(_ text: String) throws -> Node {
        var converter = try ValueConverter(function: "test", location: [])
        return try converter.convert(try JSONValue(parsing: text)).node
    }

    @Test("control messages from the server's writer")
    func control() throws {
        guard
            case .hello(let hello) = try Self.event(
                ServerMessage.hello(timestamp: 1_795_302_157_334, host: "127.0.0.1:9123", session: "sess-1"))
        else {
            Issue.record("not a hello")
            return
        }
        #expect(hello == ServerHello(timestamp: 1_795_302_157_334, version: "5", host: "127.0.0.1:9123", session: "sess-1"))
        guard case .pong = try Self.event(ServerMessage.pong) else {
            Issue.record("not a pong")
            return
        }
        guard case .shutdown(let reason) = try Self.event(ServerMessage.shutdown(reason: "bye \"now\"")) else {
            Issue.record("no shutdown")
            return
        }
        #expect(reason == "bye \"now\"")
        guard case .reset(let host) = try ServerEvent(parsing: #"{"t":"c","d":{"t":"r","d":"127.0.0.1:9141"}}"#) else {
            Issue.record("not a reset")
            return
        }
        #expect(host == "127.0.0.1:9141")
        guard case .serverError(let message) = try ServerEvent(parsing: #"{"t":"c","d":{"t":"e","d":"oops"}}"#) else {
            Issue.record("no error")
            return
        }
        #expect(message == "oops")
        guard case .control(let type) = try ServerEvent(parsing: #"{"t":"c","d":{"t":"zz","d":{}}}"#) else {
            Issue.record("unknown control lost")
            return
        }
        #expect(type == "zz")
    }

    @Test("responses: ok with data, listen ok, errors with their message")
    func responses() throws {
        guard case .response(let id, let status, let data) = try Self.event(ServerMessage.ok(id: 7)) else {
            Issue.record("not a response")
            return
        }
        #expect(id == 7 && status == "ok" && data == .leaf(.string("")))
        guard case .response(2, "ok", let listenData) = try Self.event(ServerMessage.listenOK(id: 2)) else {
            Issue.record("no listen ok")
            return
        }
        #expect(listenData == .empty)
        guard
            case .response(3, "permission_denied", let denied) = try Self.event(
                ServerMessage.failure(id: 3, status: "permission_denied", message: "no"))
        else {
            Issue.record("no failure")
            return
        }
        #expect(denied == .leaf(.string("no")))
        let value = #"{"a":{"b":1,".priority":2},"c":[true,null,"x"]}"#
        guard case .response(4, "ok", let got) = try Self.event(ServerMessage.response(id: 4, status: "ok", data: Array(value.utf8))) else {
            Issue.record("no get response")
            return
        }
        #expect(got == (try Self.node(value)))
        guard case .response(5, "ok", let null) = try ServerEvent(parsing: #"{"t":"d","d":{"r":5,"b":{"s":"ok","d":null}}}"#) else {
            Issue.record("no null response")
            return
        }
        #expect(null == .empty)
    }

    @Test("data pushes: put with and without a tag, null, merges with deletions and deep keys")
    func pushes() throws {
        let data = #"{"p1":{"title":"a","starCount":5},"p2":{"title":"b","starCount":9}}"#
        guard case .put(let path, let node, let tag) = try Self.event(ServerMessage.put(path: Self.posts, data: Array(data.utf8), tag: 1))
        else {
            Issue.record("not a put")
            return
        }
        let expected = try Self.node(data)
        #expect(path == Self.posts && node == expected && tag == 1)
        guard case .put(let rootPath, let deleted, nil) = try Self.event(ServerMessage.put(path: .root, data: Array("null".utf8))) else {
            Issue.record("no untagged put")
            return
        }
        #expect(rootPath == .root && deleted == .empty)

        let merge = ServerMessage.merge(path: Self.posts, data: Array(#"{"p1/starCount":30,"p3":null,"p4":{"t":"d"}}"#.utf8), tag: 2)
        guard case .merge(let mergePath, let changes, let mergeTag) = try Self.event(merge) else {
            Issue.record("not a merge")
            return
        }
        #expect(mergePath == Self.posts && mergeTag == 2)
        let sorted = changes.sorted { $0.path.map(\.string).joined(separator: "/") < $1.path.map(\.string).joined(separator: "/") }
        #expect(sorted.map(\.path) == [["p1", "starCount"], ["p3"], ["p4"]])
        #expect(sorted.map(\.node) == [.leaf(.int(30)), .empty, try Self.node(#"{"t":"d"}"#)])
    }

    @Test("revocations, security debug and unknown actions")
    func otherPushes() throws {
        let query = QueryParams(index: .child(["starCount"]), limit: .last(2))
        guard case .listenRevoked(let path, let queries) = try Self.event(ServerMessage.revoke(path: Self.posts, query: query)) else {
            Issue.record("no query revoke")
            return
        }
        #expect(path == Self.posts && queries == [query])
        guard case .listenRevoked(_, let none) = try Self.event(ServerMessage.revoke(path: Self.posts, query: nil)) else {
            Issue.record("no default revoke")
            return
        }
        #expect(none.isEmpty)
        // A start at null (`sp: null`) survives: revocations read the exact JSON.
        let nullStart = try ServerEvent(parsing: #"{"t":"d","d":{"a":"c","b":{"p":"/a","q":[{"sp":null,"sn":"k","sin":true}]}}}"#)
        guard case .listenRevoked(_, let starts) = nullStart else {
            Issue.record("no revoke")
            return
        }
        #expect(starts.first?.start != nil)
        guard
            case .authRevoked(let status, let reason) = try Self.event(
                ServerMessage.authRevoked(status: "expired_token", reason: "expired"))
        else {
            Issue.record("no auth revoke")
            return
        }
        #expect(status == "expired_token" && reason == "expired")
        guard
            case .appCheckRevoked("invalid_token", "bad") = try ServerEvent(
                parsing: #"{"t":"d","d":{"a":"apc","b":{"s":"invalid_token","d":"bad"}}}"#)
        else {
            Issue.record("no app check revoke")
            return
        }
        guard case .securityDebug("line 1\nline 2") = try ServerEvent(parsing: #"{"t":"d","d":{"a":"sd","b":{"msg":"line 1\nline 2"}}}"#)
        else {
            Issue.record("no security debug")
            return
        }
        guard case .unknown("rm", let body) = try ServerEvent(parsing: #"{"t":"d","d":{"a":"rm","b":{"p":"/a","d":[]}}}"#) else {
            Issue.record("unknown action lost")
            return
        }
        #expect(body == ["p": "/a", "d": []])
    }

    @Test("the captured conversation's server frames")
    func captured() throws {
        let frames = [
            #"{"t":"c","d":{"t":"h","d":{"ts":1795302157334,"v":"5","h":"127.0.0.1:9123","s":"sess-1"}}}"#,
            #"{"t":"d","d":{"r":1,"b":{"s":"ok","d":""}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"posts","d":{"p1":{"title":"a","starCount":5},"p2":{"title":"b","starCount":9}},"t":1}}}"#,
            #"{"t":"d","d":{"r":2,"b":{"s":"ok","d":{}}}}"#,
            #"{"t":"d","d":{"a":"d","b":{"p":"posts","d":{"p2":{"title":"b","starCount":9},"p4":{"starCount":20,"title":"d"}},"t":1}}}"#,
            #"{"t":"d","d":{"r":3,"b":{"s":"ok","d":""}}}"#,
            #"{"t":"d","d":{"r":4,"b":{"s":"ok","d":"xxxx"}}}"#,
        ]
        let events = try frames.map { try ServerEvent(parsing: $0) }
        guard case .hello(let hello) = events[0], hello.session == "sess-1", hello.timestamp == 1_795_302_157_334 else {
            Issue.record("hello")
            return
        }
        guard case .response(1, "ok", _) = events[1], case .response(2, "ok", .empty) = events[3],
            case .response(4, "ok", .leaf(.string("xxxx"))) = events[6]
        else {
            Issue.record("responses")
            return
        }
        guard case .put(Self.posts, let window, 1) = events[4] else {
            Issue.record("push")
            return
        }
        #expect(window == (try Self.node(#"{"p2":{"title":"b","starCount":9},"p4":{"starCount":20,"title":"d"}}"#)))
        guard case .put(Self.posts, let first, 1) = events[2] else {
            Issue.record("first push")
            return
        }
        #expect(first.childCount == 2)
    }

    @Test("malformed messages name what is wrong")
    func malformed() {
        let cases = [
            ("not json", "Invalid JSON"),
            (#"{"d":{}}"#, "layer"),
            (#"{"t":"x","d":{}}"#, "unknown layer"),
            (#"{"t":"c","d":{"d":{}}}"#, "type"),
            (#"{"t":"c","d":{"t":"h","d":{"v":"5"}}}"#, "\"ts\""),
            (#"{"t":"d","d":{"r":1,"b":{"d":""}}}"#, "status"),
            (#"{"t":"d","d":{"r":"x","b":{"s":"ok"}}}"#, "integer"),
            (#"{"t":"d","d":{"a":"d","b":{"d":1}}}"#, "path"),
            (#"{"t":"d","d":{"a":"d","b":{"p":"a","d":1,"t":"x"}}}"#, "tag"),
            (#"{"t":"d","d":{"a":"m","b":{"p":"a","d":1}}}"#, "merge"),
            (#"{"t":"d","d":{"b":{}}}"#, "action"),
        ]
        for (text, detail) in cases {
            #expect {
                _ = try ServerEvent(parsing: text)
            } throws: { error in
                guard let error = error as? DatabaseError else { return false }
                return error.code == .invalidJSON && error.message.contains(detail)
            }
        }
    }
}
