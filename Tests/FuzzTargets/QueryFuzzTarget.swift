import CanopyCore
import CanopyServer

extension FuzzTarget {
    /// Query-parameter parsing and the query window, through the REST handler: `GET
    /// /items.json?INPUT`.
    ///
    /// Properties: the answer is 200 (204 with `print=silent`) or 400 with a JSON error; a read
    /// never changes the tree; a 200 answer is a subset of `/items` with the stored values, and
    /// holds at most `limitToFirst` / `limitToLast` children.
    public static let query = FuzzTarget(
        name: "query",
        dictionary: [
            "orderBy=", "%22%24key%22", "%22%24value%22", "%22%24priority%22", "%22n%22", "%22s%22", "limitToFirst=", "limitToLast=",
            "startAt=", "startAfter=", "endAt=", "endBefore=", "equalTo=", "shallow=true", "format=export", "print=pretty", "print=silent",
            "&", "=", "%22", "null", "true", "1", "-1", "1e400", "%", "ns=", "auth=", "timeout=1s", "x-http-method-override=PUT",
        ]
    ) { bytes throws(FuzzFailure) in
        let query = String(decoding: bytes, as: UTF8.self)
        let server = FuzzServer.reads
        guard let response = server.respond(method: "GET", target: "/items.json?" + query) else {
            throw FuzzFailure("the server declined GET /items.json?\(query)")
        }
        try requireErrorBody(response, allowed: [200, 204, 400, 403], request: "GET /items.json?\(query)")
        let tree = server.tree()
        try require(tree == server.seedNode, "GET /items.json?\(query) changed the tree")
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            parameters[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        guard response.status == 200, parameters["format"] == nil, parameters["shallow"] == nil, parameters["ns"] == nil else { return }
        var builder = JSONValueBuilder()
        let answer: JSONValue
        do { answer = try JSONParser().parse(response.body, into: &builder) } catch {
            throw FuzzFailure("GET /items.json?\(query) answered invalid JSON \(describe(response.body))")
        }
        var itemsBuilder = JSONValueBuilder()
        guard
            case .object(let items)? = try? JSONParser().parse(
                NodeWriter.bytes(tree.node(at: [ChildKey("items")]), export: false, pretty: false), into: &itemsBuilder)
        else {
            throw FuzzFailure("the seed's items are not an object")
        }
        let children: [String: JSONValue]
        switch answer {
        case .null: children = [:]
        case .object(let members): children = members
        default: throw FuzzFailure("GET /items.json?\(query) answered \(describe(response.body)), not an object")
        }
        for (key, value) in children {
            try require(items[key] == value, "GET /items.json?\(query) answered \(key) = \(describe(response.body)), not the stored value")
        }
        for name in ["limitToFirst", "limitToLast"] {
            if let limit = parameters[name].flatMap({ Int($0) }) {
                try require(children.count <= limit, "GET /items.json?\(query) answered \(children.count) children past \(name)=\(limit)")
            }
        }
    }
}
