import CanopyCore
import CanopyStorage

extension FuzzTarget {
    /// The starting inputs of each target, written to `Tests/Fuzz/Corpus/NAME` by
    /// `canopy-fuzz seeds DIR` (run it again when a format changes).
    public var seeds: [[UInt8]] {
        switch self.name {
        case "json":
            return [
                #"{"users":{"ada":{"name":"Ada","born":1815,"tags":["math","engines"]}}}"#, "[1,2.5,-0,1e21,true,false,null]",
                #"{"a":{".value":1,".priority":"p"},"b":{".sv":"timestamp"},"c":{".sv":{"increment":2}}}"#,
                #""\u00e9\ud83d\ude00\n\t\\\"""#, "9223372036854775807", "-9223372036854775808", "1.7976931348623157e308", "5e-324",
                #"{"0":"a","1":"b","2":"c"}"#, #"{"":1}"#, #"{"a.b":1}"#, "[[[[[[[[[[]]]]]]]]]]", " {\"k\" : [ ] } ",
            ].map { Array($0.utf8) }
        case "path":
            return [
                "users/ada", "/a//b/", "", "/", ".info/connected", "a.b", "a#b", "a$b", "a[b]", "items/a/n", "\u{1F600}/\u{E9}",
                String(repeating: "k/", count: 33), String(repeating: "x", count: 769),
            ]
            .map { Array($0.utf8) }
        case "query":
            return [
                "orderBy=%22%24key%22&limitToFirst=2", "orderBy=%22n%22&startAt=2&endAt=3", "orderBy=%22%24value%22&equalTo=5",
                "orderBy=%22%24priority%22&limitToLast=1", "orderBy=%22s%22&startAfter=%22x%22", "orderBy=%22%24key%22&endBefore=%22c%22",
                "shallow=true", "shallow=true&orderBy=%22%24key%22&limitToFirst=1&startAfter=%22a%22", "format=export&print=pretty",
                "limitToFirst=1", "orderBy=%22n%22&limitToFirst=1&limitToLast=1", "orderBy=n", "print=silent",
            ].map { Array($0.utf8) }
        case "journal":
            return Self.journalSeeds()
        case "rest":
            return [
                "GET /.json\n\n", "GET /items.json?orderBy=%22n%22&limitToFirst=2\nX-Firebase-ETag: true\n\n",
                "PUT /items/a/n.json\n\n42", "PATCH /items.json\n\n{\"b/n\":5,\"g\":{\"x\":1}}",
                "POST /items.json?print=silent\n\n{\"n\":9}",
                "DELETE /items/b.json\n\n", "PUT /items/c.json\nif-match: \"abc\"\n\n{\"n\":3}", "GET /items/a/.priority.json\n\n",
                "PUT /items/a/.priority.json\n\n7", "POST /items.json\nX-HTTP-Method-Override: PATCH\n\n{\"d\":6}",
                "PUT /n.json\n\n{\".sv\":{\"increment\":1}}", "GET /.settings/rules.json\n\n", "PUT /items.json?ns=other\n\n{}",
                "GET /users.json?shallow=true\n\n", "PUT /items/x.json\n\n{\"a.b\":1}", "PATCH /.json\n\n{\"a\":1,\"a/b\":2}",
            ].map { Array($0.utf8) }
        case "rules":
            return [
                #"{"rules": {".read": true, ".write": false}}"#,
                #"{"rules": {"users": {"$uid": {".read": "auth != null && auth.uid === $uid", ".write": "auth.uid === $uid", ".validate": "newData.hasChildren(['name'])", "name": {".validate": "newData.isString() && newData.val().length < 50"}}}}}"#,
                "{\n  // comments and trailing commas\n  \"rules\": {\n    \"posts\": {\".indexOn\": [\"starCount\"], \".read\": \"query.orderByChild == 'starCount' && query.limitToFirst <= 10\",},\n  },\n}",
                #"{"rules": {"cities": {"$id": {".write": true, ".validate": "newData.parent().parent().child('countries').child(newData.child('country').val()).child('last_updated').val() === now"}}}}"#,
                #"{"rules": {"a": {".validate": "newData.val().matches(/^[a-z]+$/i)", ".write": "root.child('open').val() == true"}}}"#,
                #"{"rules": {".read": "auth.token.admin === true || data.child('public').val() === true"}}"#,
                #"{"rules": {".read": "1 +"}}"#, #"{"rules": {"$a": {"$b": {}}}}"#,
            ].map { Array($0.utf8) }
        default:
            return []
        }
    }

    /// A segment with a few writes in each mode (raw, sealed), and a checkpoint.
    private static func journalSeeds() -> [[UInt8]] {
        var builder = NodeBuilder()
        let tree =
            (try? JSONParser().parse(#"{"a":{"b":1,"c":"two"},"list":[1,2,3],"p":{".value":true,".priority":5}}"#, into: &builder).node)
            ?? .empty
        let writes: [WriteOperation] = [
            .set(DatabasePath([ChildKey("a")]), WriteValue(node: tree)),
            .set(DatabasePath([ChildKey("a"), ChildKey("b")]), WriteValue(node: .leaf(.double(2.5)))),
            .set(.root, WriteValue(node: .empty)),
        ]
        var segment = JournalFormat.header(firstSequence: 1)
        for (i, write) in writes.enumerated() {
            JournalFormat.appendRecord(write, sequence: UInt64(i + 1), now: 1_700_000_000_000 + Int64(i), to: &segment)
        }
        let checkpoint = CheckpointFormat.encode(root: tree, sequence: 3)
        return [[0] + segment, [1] + segment, [1] + Array(segment.prefix(segment.count - 5)), [2] + checkpoint]
    }
}
