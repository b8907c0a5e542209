import CanopyCore
import CanopyWire
import Testing

/// The client's encoder, checked against the server's decoder and the JS SDK's captured frames.
@Suite("Writing the client's requests")
struct ClientRequestTests {
    static let posts = DatabasePath(["posts"])
    static let query = QueryParams(index: .child(["starCount"]), limit: .last(2))

    /// Decodes `request` with the server's reader.
    static func decoded(_ request: ClientRequest) throws -> (id: Int64, action: ClientAction)? {
        guard case .request(let id, let action) = try ClientMessage(parsing: request.text) else { return nil }
        return (id, action)
    }

    static func json(_ text: String) throws -> [UInt8] { JSONWriter.bytes(try JSONValue(parsing: text)) }

    static func writeValue(_ text: String, at location: [String] = []) throws -> WriteValue {
        var converter = try ValueConverter(function: "set", location: location)
        return try converter.convert(try JSONValue(parsing: text))
    }

    @Test("every request decodes, with its id, as the action it encodes")
    func roundTrip() throws {
        let p1 = DatabasePath(["posts", "p1"])
        let cases: [(ClientRequest, Int64, ClientAction)] = [
            (
                .listen(id: 2, path: Self.posts, query: Self.query, tag: 1), 2,
                .listen(path: Self.posts, query: Self.query, tag: 1, hash: "")
            ),
            (.listen(id: 3, path: .root, hash: "abc"), 3, .listen(path: .root, query: nil, tag: nil, hash: "abc")),
            (.unlisten(id: 4, path: Self.posts, query: Self.query, tag: 1), 4, .unlisten(path: Self.posts, query: Self.query, tag: 1)),
            (.unlisten(id: 5, path: Self.posts), 5, .unlisten(path: Self.posts, query: nil, tag: nil)),
            (.put(id: 6, path: p1, data: try Self.json(#"{"a":1}"#)), 6, .put(path: p1, data: ["a": 1], hash: nil)),
            (.put(id: 7, path: p1, data: Array("6".utf8), hash: "w28="), 7, .put(path: p1, data: 6, hash: "w28=")),
            (
                .merge(id: 8, path: Self.posts, members: [(["p1", "starCount"], Array("30".utf8)), (["p3"], Array("null".utf8))]), 8,
                .merge(path: Self.posts, data: ["p1/starCount": 30, "p3": .null])
            ),
            (.get(id: 9, path: p1), 9, .get(path: p1, query: .default)),
            (.get(id: 10, path: Self.posts, query: Self.query), 10, .get(path: Self.posts, query: Self.query)),
            (.onDisconnectPut(id: 11, path: p1, data: Array("false".utf8)), 11, .onDisconnectPut(path: p1, data: false)),
            (
                .onDisconnectMerge(id: 12, path: p1, members: [(["a"], Array("null".utf8))]), 12,
                .onDisconnectMerge(path: p1, data: ["a": .null])
            ),
            (.onDisconnectCancel(id: 13, path: p1), 13, .onDisconnectCancel(path: p1)),
            (.auth(id: 14, credential: "owner"), 14, .auth(credential: "owner", authVariable: nil, noAuth: false)),
            (.auth(id: 15, credential: "h.c.s", noAuth: true), 15, .auth(credential: "h.c.s", authVariable: nil, noAuth: true)),
            (
                .auth(id: 16, credential: "t", authVariable: ["uid": "u1"]), 16,
                .auth(credential: "t", authVariable: ["uid": "u1"], noAuth: false)
            ),
            (.unauth(id: 17), 17, .unauth),
            (.stats(id: 18, counters: ["sdk.swift.1-0-0": 1]), 18, .stats),
            (.appCheck(id: 19, token: "tok"), 19, .appCheck(token: "tok")),
            (.unAppCheck(id: 20), 20, .unAppCheck),
            (
                .transactionMerge(
                    id: 21, path: .root, members: [(["a"], Array("1".utf8)), (["b", "c"], Array("null".utf8))],
                    readHashes: [(DatabasePath(["a"]), "h1="), (DatabasePath(["x", "y"]), "")]), 21,
                .transactionMerge(path: .root, data: ["a": 1, "b/c": .null], readHashes: ["/a": "h1=", "/x/y": ""])
            ),
        ]
        for (request, id, action) in cases {
            let decoded = try #require(try Self.decoded(request), "\(request.text)")
            #expect(decoded.id == id, "\(request.text)")
            #expect(decoded.action == action, "\(request.text)")
        }
    }

    @Test("the captured conversation's requests, byte for byte where the JS SDK's member order is ours")
    func captured() throws {
        let p4 = DatabasePath(["posts", "p4"])
        #expect(
            ClientRequest.put(id: 3, path: p4, data: try Self.writeValue(#"{"title":"d","starCount":20}"#).wireJSON).text
                == #"{"t":"d","d":{"r":3,"a":"p","b":{"p":"/posts/p4","d":{"starCount":20,"title":"d"}}}}"#)
        #expect(
            ClientRequest.merge(id: 4, path: Self.posts, members: [(["p1", "starCount"], Array("30".utf8)), (["p3"], Array("null".utf8))])
                .text
                == #"{"t":"d","d":{"r":4,"a":"m","b":{"p":"/posts","d":{"p1/starCount":30,"p3":null}}}}"#)
        #expect(
            ClientRequest.get(id: 4, path: DatabasePath(["blobs", "b1"])).text
                == #"{"t":"d","d":{"r":4,"a":"g","b":{"p":"/blobs/b1","q":{}}}}"#)
        #expect(
            ClientRequest.onDisconnectPut(id: 6, path: DatabasePath(["presence", "A"]), data: Node.leaf(.bool(false)).wireJSON).text
                == #"{"t":"d","d":{"r":6,"a":"o","b":{"p":"/presence/A","d":false}}}"#)
        #expect(
            ClientRequest.stats(id: 1, counters: ["sdk.node.12-18-0": 1]).text
                == #"{"t":"d","d":{"r":1,"a":"s","b":{"c":{"sdk.node.12-18-0":1}}}}"#)
        // The listen's query object: same members as the capture (key order is not significant).
        let listen = try JSONValue(parsing: ClientRequest.listen(id: 2, path: Self.posts, query: Self.query, tag: 1).text)
        #expect(
            listen
                == (try JSONValue(
                    parsing: #"{"t":"d","d":{"r":2,"a":"q","b":{"p":"/posts","q":{"l":2,"vf":"r","i":"starCount"},"t":1,"h":""}}}"#)))
        let unlisten = try JSONValue(parsing: ClientRequest.unlisten(id: 7, path: Self.posts, query: Self.query, tag: 1).text)
        #expect(
            unlisten
                == (try JSONValue(parsing: #"{"t":"d","d":{"r":7,"a":"n","b":{"p":"/posts","q":{"l":2,"vf":"r","i":"starCount"},"t":1}}}"#))
        )
    }

    @Test("control messages: the keep-alive is a bare 0, the ping a control p")
    func control() throws {
        #expect(ClientRequest.keepAlive.text == "0")
        #expect(try ClientMessage(parsing: ClientRequest.ping.text) == .control(type: "p"))
    }

    @Test("server values go back on the wire as placeholders, priorities as .priority")
    func placeholders() throws {
        let texts = [
            #"{"a":{".sv":"timestamp"},"b":{".sv":{"increment":2}},"c":{"x":1,".priority":{".sv":"timestamp"}}}"#,
            #"{".sv":{"increment":1.5}}"#,
            #"{"n":{"m":{".sv":"timestamp"}},"s":"x",".priority":"p"}"#,
            #"{"x":{".value":true,".priority":{".sv":"timestamp"}}}"#,
        ]
        for text in texts {
            let value = try Self.writeValue(text)
            #expect(!value.placeholders.isEmpty)
            #expect(try JSONValue(parsing: String(decoding: value.wireJSON, as: UTF8.self)) == (try JSONValue(parsing: text)), "\(text)")
        }
        // A server value with a priority (`setValue(ServerValue.timestamp(), andPriority: 1)`).
        let prioritized = WriteValue(
            node: Node.leaf(.int(0)).withPriority(.int(1)), placeholders: [.init(path: [], value: .timestamp, isPriority: false)])
        #expect(
            try JSONValue(parsing: String(decoding: prioritized.wireJSON, as: UTF8.self)) == [
                ".value": [".sv": "timestamp"], ".priority": 1,
            ])
        // Without placeholders: the node's export form, never arrays.
        #expect(String(decoding: try Self.writeValue(#"["a","b"]"#).wireJSON, as: UTF8.self) == #"{"0":"a","1":"b"}"#)
    }

    @Test("a write operation is a p for a set or a priority, an m for an update; o and om when the connection closes")
    func writeOperations() throws {
        let p1 = DatabasePath(["posts", "p1"])
        let set = WriteOperation.set(p1, try Self.writeValue(#"{"t":{".sv":"timestamp"}}"#))
        #expect(try Self.decoded(.write(id: 1, set))?.action == .put(path: p1, data: ["t": [".sv": "timestamp"]], hash: nil))
        #expect(try Self.decoded(.write(id: 1, set, hash: "h"))?.action == .put(path: p1, data: ["t": [".sv": "timestamp"]], hash: "h"))
        #expect(
            try Self.decoded(.write(id: 1, set, onDisconnect: true))?.action
                == .onDisconnectPut(path: p1, data: ["t": [".sv": "timestamp"]]))

        let priority = WriteOperation.setPriority(p1, .value(.int(7)))
        #expect(try Self.decoded(.write(id: 2, priority))?.action == .putPriority(path: p1, priority: 7))
        let serverPriority = WriteOperation.setPriority(p1, .serverValue(.timestamp))
        #expect(try Self.decoded(.write(id: 2, serverPriority))?.action == .putPriority(path: p1, priority: [".sv": "timestamp"]))

        let update = WriteOperation(
            path: Self.posts,
            entries: [
                .init(path: ["p1", "starCount"], value: try Self.writeValue(#"{".sv":{"increment":1}}"#)),
                .init(path: ["p3"], value: WriteValue(node: .empty)),
            ])
        let members: [String: JSONValue] = ["p1/starCount": [".sv": ["increment": 1]], "p3": .null]
        #expect(try Self.decoded(.write(id: 3, update))?.action == .merge(path: Self.posts, data: members))
        #expect(try Self.decoded(.write(id: 3, update, onDisconnect: true))?.action == .onDisconnectMerge(path: Self.posts, data: members))
        // An update of one child is still an update (it must not replace the location).
        let one = WriteOperation(path: Self.posts, entries: [.init(path: ["p1"], value: WriteValue(node: .leaf(.int(1))))])
        #expect(try Self.decoded(.write(id: 4, one))?.action == .merge(path: Self.posts, data: ["p1": 1]))
    }

    @Test("the pieces of a split request reassemble to the request")
    func split() throws {
        let big = String(repeating: "é", count: 40_000)
        let request = ClientRequest.put(id: 9, path: Self.posts, data: Node.leaf(.string(big)).wireJSON)
        let frames = WireFrameSplitter.frames(request.text)
        #expect(frames.count == 4 && frames[0] == "3")
        var assembler = WireFrameAssembler(maxMessageBytes: 1 << 20)
        var message: String? = nil
        for frame in frames { message = try assembler.receive(frame) ?? message }
        #expect(
            try Self.decoded(ClientRequest(text: try #require(message)))?.action == .put(path: Self.posts, data: .string(big), hash: nil))
    }
}
