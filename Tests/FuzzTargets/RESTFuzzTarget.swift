import CanopyCore
import CanopyServer

extension FuzzTarget {
    /// The REST request handler, in-process. The input is a request in a relaxed HTTP/1 form:
    /// `METHOD TARGET` on the first line, then `Name: value` header lines, an empty line and
    /// the body.
    ///
    /// Properties: the handler never fails with 500 and answers only statuses of the protocol;
    /// every error comes with a JSON `{"error": "..."}` body; a refused request (4xx) leaves the
    /// tree exactly as it was.
    public static let rest = FuzzTarget(
        name: "rest",
        dictionary: [
            "GET ", "PUT ", "POST ", "PATCH ", "DELETE ", "HEAD ", "OPTIONS ", "/.json", "/items.json", "/items/a.json",
            "/items/a/.priority.json", "/.settings/rules.json", "?print=silent", "?print=pretty", "&format=export", "?shallow=true",
            "X-HTTP-Method-Override: ", "X-Firebase-ETag: true", "if-match: ", "if-none-match: ", "Content-Length: ", "\n\n",
            "{\".sv\":\"timestamp\"}", "{\".sv\":{\"increment\":1}}", "{\"a/b\":1,\"a\":2}", "null", "{\".value\":1,\".priority\":2}",
        ]
    ) { bytes throws(FuzzFailure) in
        guard let request = RelaxedRequest(bytes) else { return }
        let server = FuzzServer.writes
        let before = server.tree()
        if before != server.seedNode { server.reset() }
        guard let response = server.respond(method: request.method, target: request.target, headers: request.headers, body: request.body)
        else { return }
        let what = "\(request.method) \(request.target)"
        try requireErrorBody(response, allowed: [200, 204, 304, 400, 401, 404, 405, 412, 413, 403], request: what)
        if response.status >= 400 {
            try require(
                server.tree() == server.seedNode,
                "\(what) was refused with \(response.status) but changed the tree; body \(describe(request.body))")
        }
    }
}

/// A request parsed leniently from fuzz bytes.
struct RelaxedRequest {
    var method: String
    var target: String
    var headers: [(name: String, value: String)] = []
    var body: [UInt8]

    init?(_ bytes: [UInt8]) {
        let newline = UInt8(ascii: "\n")
        guard let firstEnd = bytes.firstIndex(of: newline) else { return nil }
        let requestLine = String(decoding: bytes[..<firstEnd], as: UTF8.self)
        let parts = requestLine.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[1].hasPrefix("/") else { return nil }
        self.method = String(parts[0])
        self.target = String(parts[1])
        var offset = firstEnd + 1
        while offset < bytes.count {
            let end = bytes[offset...].firstIndex(of: newline) ?? bytes.count
            let line = String(decoding: bytes[offset..<end], as: UTF8.self)
            offset = end + 1
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            self.headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " })))
        }
        self.body = offset < bytes.count ? Array(bytes[offset...]) : []
    }
}
