package import CanopyCore

/// Where a remote database lives: a Firebase-style database URL read into host, port, TLS and
/// namespace, and the WebSocket URL the SDKs open for it.
///
/// Accepted: `http://127.0.0.1:9000?ns=blog`, `https://NAME.firebaseio.com`,
/// `https://NAME.REGION.firebasedatabase.app`, `ws://host:port/.ws?ns=blog`, `wss://…`. The scheme
/// decides TLS (`https`, `wss`); the default ports are 443 and 80. The namespace is the `ns`
/// parameter, else the first label of a `firebaseio.com` / `firebasedatabase.app` host.
package struct DatabaseURL: Sendable, Equatable {
    /// The host name or address, lower-cased, without brackets for IPv6.
    package var host: String
    package var port: Int
    package var isSecure: Bool
    package var namespace: String

    private static let firebaseDomains = [".firebaseio.com", ".firebasedatabase.app", ".firebaseio-demo.com"]
}

extension DatabaseURL {
    /// Reads a database URL.
    ///
    /// - Throws: ``CanopyCore/DatabaseError`` `.invalidOperation` naming the offending part: the
    ///   scheme, the host, the port, a child path, or a missing or invalid namespace.
    package init(_ string: String) throws(DatabaseError) {
        guard let schemeEnd = string.firstRange(of: "://") else { throw Self.invalid(string, "it needs a scheme (http, https, ws or wss)") }
        switch string[..<schemeEnd.lowerBound].lowercased() {
        case "http", "ws": self.isSecure = false
        case "https", "wss": self.isSecure = true
        case let scheme: throw Self.invalid(string, "the scheme \"\(scheme)\" is not http, https, ws or wss")
        }
        var rest = string[schemeEnd.upperBound...]
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        let authority = rest.prefix { $0 != "/" }
        let path = rest[authority.endIndex...]
        guard path.isEmpty || path == "/" || path == "/.ws" else {
            throw Self.invalid(string, "it must name the root of the database, not the path \"\(path)\"")
        }
        let (host, port) = try Self.hostAndPort(authority, isSecure: self.isSecure) { Self.invalid(string, $0) }
        (self.host, self.port) = (host, port)
        var namespace: String? = nil
        for parameter in query.split(separator: "&") where parameter.hasPrefix("ns=") {
            namespace = String(parameter.dropFirst(3))
        }
        if namespace == nil, let domain = Self.firebaseDomains.first(where: { host.hasSuffix($0) }) {
            let label = host.dropLast(domain.count).prefix { $0 != "." }
            namespace = label.isEmpty ? nil : String(label)
        }
        guard let namespace else {
            throw Self.invalid(string, "it needs a namespace: add ?ns=NAME (only firebaseio.com and firebasedatabase.app hosts imply one)")
        }
        guard (1...63).contains(namespace.utf8.count), namespace.utf8.allSatisfy(Self.isNamespaceByte) else {
            throw Self.invalid(string, "the namespace \"\(namespace)\" must be 1 to 63 letters, digits, '-' or '_'")
        }
        self.namespace = namespace
    }

    /// The same database (namespace, TLS) at the host a server's reset (`r`) names: `host`,
    /// `host:port` or `[IPv6]:port`.
    ///
    /// - Throws: ``CanopyCore/DatabaseError`` `.invalidOperation` naming what is wrong with `hostAndPort`.
    package func redirected(to hostAndPort: String) throws(DatabaseError) -> DatabaseURL {
        let fail = { (detail: String) in
            DatabaseError(.invalidOperation, "Invalid host \"\(hostAndPort)\" in the server's reset: \(detail).")
        }
        guard !hostAndPort.contains("/"), !hostAndPort.contains("?") else { throw fail("it must be host[:port], without a scheme or path") }
        let (host, port) = try Self.hostAndPort(Substring(hostAndPort), isSecure: self.isSecure, fail: fail)
        return DatabaseURL(host: host, port: port, isSecure: self.isSecure, namespace: self.namespace)
    }

    /// `host:port` as it goes into a URL (IPv6 addresses in brackets).
    package var authority: String { (self.host.contains(":") ? "[\(self.host)]" : self.host) + ":\(self.port)" }

    /// The WebSocket URL: `ws(s)://host:port/.ws?v=5&ns=NAMESPACE`, plus `&ls=SESSION` with the
    /// session id of the previous connection's hello when reconnecting.
    package func webSocketURL(lastSession: String? = nil) -> String {
        var url = (self.isSecure ? "wss://" : "ws://") + self.authority + "/.ws?v=5&ns=" + self.namespace
        if let lastSession { url += "&ls=" + lastSession }
        return url
    }

    /// The host and port of `authority`; `fail` makes the error from what is wrong.
    private static func hostAndPort(
        _ authority: Substring, isSecure: Bool, fail: (String) -> DatabaseError
    ) throws(DatabaseError) -> (String, Int) {
        guard !authority.contains("@") else { throw fail("user information in the host is not supported") }
        var host = authority
        var portText: Substring? = nil
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw fail("the IPv6 address has no closing ']'") }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw fail("unexpected \"\(after)\" after the host")
            }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            portText = host[host.index(after: colon)...]
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(where: { $0 == " " || $0 == "/" || $0 == "%" }) else {
            throw fail("the host \"\(host)\" is not valid")
        }
        guard let portText else { return (host.lowercased(), isSecure ? 443 : 80) }
        guard let port = Int(portText), (1...65535).contains(port) else {
            throw fail("the port \"\(portText)\" is not a number from 1 to 65535")
        }
        return (host.lowercased(), port)
    }

    private static func isNamespaceByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }

    private static func invalid(_ url: String, _ detail: String) -> DatabaseError {
        DatabaseError(.invalidOperation, "Invalid database URL \"\(url)\": \(detail).")
    }
}
