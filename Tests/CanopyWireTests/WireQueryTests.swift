import CanopyCore
import CanopyWire
import Testing

@Suite("Query objects on the wire")
struct WireQueryTests {
    static func bound(_ value: LeafValue?, _ key: QueryBound.Key, inclusive: Bool = true) -> QueryBound {
        QueryBound(value: value, key: key, inclusive: inclusive)
    }

    // The query objects the JS SDK sent for these queries (captured), and the engine parameters the
    // same queries get from the embedded API.
    static let jsQueries: [(String, String, QueryParams)] = [
        (
            "orderByChild('starCount').limitToLast(2)", #"{"l":2,"vf":"r","i":"starCount"}"#,
            QueryParams(index: .child(["starCount"]), limit: .last(2))
        ),
        (
            "orderByKey().startAt('b').endBefore('d')", #"{"sp":"b","sin":true,"ep":"d","ein":false,"i":".key"}"#,
            QueryParams(index: .key, start: bound(nil, .key("b")), end: bound(nil, .key("d"), inclusive: false))
        ),
        (
            "orderByValue().equalTo(5)", #"{"sp":5,"sin":true,"ep":5,"ein":true,"i":".value"}"#,
            QueryParams(index: .value, start: bound(.int(5), .min), end: bound(.int(5), .max))
        ),
        (
            "orderByChild('a/b').startAfter(3).limitToFirst(10)", #"{"sp":3,"sn":"[MAX_NAME]","sin":false,"l":10,"vf":"l","i":"a/b"}"#,
            QueryParams(index: .child(["a", "b"]), start: bound(.int(3), .max, inclusive: false), limit: .first(10))
        ),
        (
            "orderByChild('score').startAfter(3, 'k1')", #"{"sp":3,"sn":"k1","sin":false,"i":"score"}"#,
            QueryParams(index: .child(["score"]), start: bound(.int(3), .key("k1"), inclusive: false))
        ),
        (
            "orderByChild('score').endBefore(9)", #"{"ep":9,"en":"[MIN_NAME]","ein":false,"i":"score"}"#,
            QueryParams(index: .child(["score"]), end: bound(.int(9), .min, inclusive: false))
        ),
        (
            "orderByPriority().startAt(null, 'k')", #"{"sp":null,"sn":"k","sin":true}"#,
            QueryParams(index: .priority, start: bound(nil, .key("k")))
        ),
        ("limitToFirst(3)", #"{"l":3,"vf":"l"}"#, QueryParams(limit: .first(3))),
        (
            "orderByChild('name').equalTo('ann', 'key7')",
            #"{"sp":"ann","sn":"key7","sin":true,"ep":"ann","en":"key7","ein":true,"i":"name"}"#,
            QueryParams(index: .child(["name"]), start: bound(.string("ann"), .key("key7")), end: bound(.string("ann"), .key("key7")))
        ),
        // iOS and Android leave out sin/ein (inclusive) and use the sentinels for startAfter.
        (
            "iOS startAfter(3)", #"{"sp":3,"sn":"[MAX_NAME]","i":"score"}"#,
            QueryParams(index: .child(["score"]), start: bound(.int(3), .max))
        ),
        // The legacy limit() without vf: anchored left with a start bound, else right.
        ("legacy limit with a start", #"{"sp":1,"l":4}"#, QueryParams(start: bound(.int(1), .min), limit: .first(4))),
        ("legacy limit alone", #"{"l":4}"#, QueryParams(limit: .last(4))),
    ]

    @Test("reads the JS SDK's query objects into the engine's parameters", arguments: jsQueries)
    func readsJSQueries(name: String, json: String, expected: QueryParams) throws {
        #expect(try WireQuery.params(JSONValue(parsing: json)) == expected, "\(name)")
    }

    @Test("writes query objects that read back to the same parameters", arguments: jsQueries)
    func roundTrips(name: String, json: String, expected: QueryParams) throws {
        #expect(try WireQuery.params(WireQuery.object(expected)) == expected, "\(name)")
    }

    @Test("an absent or empty query object is the default query")
    func defaultQuery() throws {
        #expect(try WireQuery.params(nil) == .default)
        #expect(try WireQuery.params(.object([:])) == .default)
        #expect(WireQuery.object(.default) == .object([:]))
    }

    @Test(
        "a malformed query object is refused, naming the member",
        arguments: [
            (#"{"l":0,"vf":"l"}"#, #""l" must be an integer from 1 to 2147483647"#),
            (#"{"l":4,"vf":"x"}"#, #""vf" must be "l" or "r""#),
            (#"{"i":5}"#, #""i" must be a string"#),
            (#"{"i":"a.b"}"#, #""i" is not a valid child path: a.b"#),
            (#"{"sp":{"a":1}}"#, #""sp" must be null, a boolean, a number or a string"#),
            (#"{"sp":true}"#, #""sp" must be a valid priority (null, a number or a string) with the priority index"#),
            (#"{"sp":5,"i":".key"}"#, #""sp" must be a key (a string) with the key index"#),
            (#"{"sn":"k"}"#, #""sn" needs "sp""#),
            (#"{"ep":1,"ein":"yes"}"#, #""ein" must be a boolean"#),
            ("[1]", "the query must be an object"),
        ])
    func refusesMalformed(json: String, detail: String) throws {
        let error = #expect(throws: DatabaseError.self) { try WireQuery.params(JSONValue(parsing: json)) }
        #expect(error?.code == .invalidQuery)
        #expect(error?.message == "Invalid query object: \(detail).")
    }
}
