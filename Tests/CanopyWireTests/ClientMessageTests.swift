import CanopyCore
import CanopyWire
import Testing

@Suite("Reading the SDKs' messages")
struct ClientMessageTests {
    static func action(_ json: String) throws -> ClientAction? {
        guard case .request(_, let action) = try ClientMessage(parsing: json) else { return nil }
        return action
    }

    @Test("control pings and requests with their ids")
    func envelopes() throws {
        #expect(try ClientMessage(parsing: #"{"t":"c","d":{"t":"p","d":{}}}"#) == .control(type: "p"))
        #expect(
            try ClientMessage(parsing: #"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.node.12-18-0":1}}}}"#)
                == .request(id: 1, action: .stats))
    }

    @Test("every data action of the captured conversation")
    func capturedActions() throws {
        let posts = DatabasePath(["posts"])
        #expect(
            try Self.action(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/posts","q":{"l":2,"vf":"r","i":"starCount"},"t":1,"h":""}}}"#)
                == .listen(path: posts, query: QueryParams(index: .child(["starCount"]), limit: .last(2)), tag: 1, hash: ""))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":2,"a":"q","b":{"p":"posts","h":"abc"}}}"#)
                == .listen(path: posts, query: nil, tag: nil, hash: "abc"))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/posts/p4","d":{"starCount":20,"title":"d"}}}}"#)
                == .put(path: DatabasePath(["posts", "p4"]), data: ["starCount": 20, "title": "d"], hash: nil))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/counter","d":6,"h":"w28swksk9+tXf5jEdS9R5oSFAv8="}}}"#)
                == .put(path: DatabasePath(["counter"]), data: 6, hash: "w28swksk9+tXf5jEdS9R5oSFAv8="))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":5,"a":"p","b":{"p":"/posts/p1/.priority","d":7}}}"#)
                == .putPriority(path: DatabasePath(["posts", "p1"]), priority: 7))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"p1/starCount":30,"p3":null}}}}"#)
                == .merge(path: posts, data: ["p1/starCount": 30, "p3": .null]))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":4,"a":"g","b":{"p":"/blobs/b1","q":{}}}}"#)
                == .get(path: DatabasePath(["blobs", "b1"]), query: .default))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":6,"a":"o","b":{"p":"/presence/A","d":false}}}"#)
                == .onDisconnectPut(path: DatabasePath(["presence", "A"]), data: false))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":6,"a":"om","b":{"p":"/presence","d":{"A":null}}}}"#)
                == .onDisconnectMerge(path: DatabasePath(["presence"]), data: ["A": .null]))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":6,"a":"oc","b":{"p":"/presence/A","d":null}}}"#)
                == .onDisconnectCancel(path: DatabasePath(["presence", "A"])))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":7,"a":"n","b":{"p":"/posts","q":{"l":2,"vf":"r","i":"starCount"},"t":1}}}"#)
                == .unlisten(path: posts, query: QueryParams(index: .child(["starCount"]), limit: .last(2)), tag: 1))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":2,"a":"gauth","b":{"cred":"owner"}}}"#)
                == .auth(credential: "owner", authVariable: nil, noAuth: false))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":2,"a":"auth","b":{"cred":"x.y.z","noauth":true}}}"#)
                == .auth(credential: "x.y.z", authVariable: nil, noAuth: true))
        #expect(try Self.action(#"{"t":"d","d":{"r":9,"a":"unauth","b":{}}}"#) == .unauth)
        #expect(try Self.action(#"{"t":"d","d":{"r":9,"a":"appcheck","b":{"token":"t"}}}"#) == .appCheck(token: "t"))
        #expect(try Self.action(#"{"t":"d","d":{"r":9,"a":"unappeck","b":{}}}"#) == .unAppCheck)
        #expect(try Self.action(#"{"t":"d","d":{"r":9,"a":"unappcheck","b":{}}}"#) == .unAppCheck)
        #expect(try Self.action(#"{"t":"d","d":{"r":9,"a":"zz","b":{}}}"#) == .unknown("zz"))
    }

    @Test("a request whose body does not fit its action is answered, not dropped")
    func invalidBodies() throws {
        guard case .invalid(let status, let message)? = try Self.action(#"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a.b","d":1}}}"#) else {
            Issue.record("expected an invalid action")
            return
        }
        #expect(status == "invalid_path")
        #expect(message.contains("\"/a.b\""))
        #expect(try Self.action(#"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/a"}}}"#) == .invalid("invalid_value", "a write needs data \"d\""))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":3,"a":"m","b":{"p":"/a","d":5}}}"#)
                == .invalid("invalid_value", "a merge needs an object \"d\""))
        #expect(
            try Self.action(#"{"t":"d","d":{"r":3,"a":"q","b":{"p":"/a","q":{"l":0},"t":1}}}"#)
                == .invalid("invalid_query", "Invalid query object: \"l\" must be an integer from 1 to 2147483647."))
    }

    @Test(
        "malformed messages are refused with a reason",
        arguments: [
            ("nope", "not JSON"), (#"{"t":"x","d":{}}"#, "unknown layer \"x\""),
            (#"{"d":{}}"#, "a message is {\"t\": layer, \"d\": payload}"),
            (#"{"t":"d","d":{"a":"p","b":{}}}"#, "a request needs an integer \"r\""),
            (#"{"t":"d","d":{"r":1,"b":{}}}"#, "a request needs an action \"a\""),
            (#"{"t":"c","d":{}}"#, "a control message needs \"t\""),
        ])
    func malformed(json: String, reason: String) {
        #expect(throws: ClientMessage.Malformed(reason: reason)) { try ClientMessage(parsing: json) }
    }
}
