import CanopyCore

/// A `canopy serve` address (`http://host:port`, optionally `?ns=NAME`), and the request targets
/// under it.
struct ServerURL: Sendable {
    var host: String
    var port: Int
    /// Query parameters every request carries (the namespace).
    var parameters: [(String, String)]
    var text: String

    init(parsing text: String) throws(CLIError) {
        self.text = text
        guard text.hasPrefix("http://") else {
            throw .usage("--url \(text): give an http:// address, for example http://127.0.0.1:9000.")
        }
        var rest = Substring(text.dropFirst(7))
        var query = Substring("")
        if let q = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        if let slash = rest.firstIndex(of: "/") {
            guard rest[slash...].allSatisfy({ $0 == "/" }) else {
                throw .usage("--url \(text): give the server's address without a path (the PATH argument says where).")
            }
            rest = rest[..<slash]
        }
        var host = rest
        var port = 80
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let p = Int(rest[rest.index(after: colon)...]), (1...65535).contains(p) else {
                throw .usage("--url \(text): the port is not a number from 1 to 65535.")
            }
            port = p
            host = rest[..<colon]
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .usage("--url \(text): the host is missing.") }
        self.host = String(host)
        self.port = port
        self.parameters = query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
    }

    /// This server with `name` as the namespace every request names (`ns=name`).
    func namespaced(_ name: String) -> ServerURL {
        var copy = self
        copy.parameters.removeAll { $0.0 == "ns" }
        copy.parameters.append(("ns", name))
        return copy
    }

    /// `/a/b.json?name=value&…` for `path`, the values percent-encoded.
    func target(_ path: DatabasePath, _ parameters: [(String, String)] = []) -> String {
        self.target(resource: "/" + path.keys.map { Self.encode($0.string) }.joined(separator: "/") + ".json", parameters)
    }

    /// `resource?name=value&…`, for a resource that is not a database path (`/.settings/rules.json`).
    func target(resource: String, _ parameters: [(String, String)] = []) -> String {
        var out = resource
        let all = parameters.map { ($0.0, Self.encode($0.1)) } + self.parameters
        if !all.isEmpty { out += "?" + all.map { "\($0.0)=\($0.1)" }.joined(separator: "&") }
        return out
    }

    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 15)])
            }
        }
        return out
    }
}
