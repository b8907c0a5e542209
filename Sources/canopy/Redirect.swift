/// How the command line's REST and event-stream client follows redirects: `307 Temporary
/// Redirect` (what the Firebase REST API answers to send a client to another server) and `308
/// Permanent Redirect`, for every method (the same method, body and headers go to the
/// `Location`) and for event streams, up to ``limit`` in a row.
enum Redirect {
    /// The most redirects followed for one request.
    static let limit = 10

    /// Where a request goes.
    struct Request: Sendable {
        var server: ServerURL
        var target: String
        var headers: [(String, String)]

        /// This request sent to `location`: an absolute `http://host[:port]/path?query`, or a path
        /// (`/path?query`) on the same server. The `Authorization` header goes along only to the
        /// same host (as curl does: a token is not handed to another host).
        func following(_ location: String) throws(CLIError) -> Request {
            if location.hasPrefix("/") { return Request(server: self.server, target: location, headers: self.headers) }
            let lowered = location.lowercased()
            guard lowered.hasPrefix("http://") else {
                let reason =
                    lowered.hasPrefix("https://")
                    ? "canopy speaks plain http:// only" : "a redirect needs an http:// address or a path starting with /"
                throw .failure("The server at \(self.server.text) redirected to \"\(location)\": \(reason).")
            }
            let rest = location.dropFirst("http://".count)
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            var target = String(rest[authority.endIndex...])
            if !target.hasPrefix("/") { target = "/" + target }
            let server: ServerURL
            do {
                server = try ServerURL(parsing: "http://\(authority)")
            } catch {
                throw .failure("The server at \(self.server.text) redirected to \"\(location)\", which is not a valid address.")
            }
            var headers = self.headers
            if server.host.lowercased() != self.server.host.lowercased() {
                headers.removeAll { $0.0.lowercased() == "authorization" }
            }
            return Request(server: server, target: target, headers: headers)
        }
    }

    /// The `Location` to follow when `status` is a redirect (307, 308); `nil` for any other status.
    static func location(of status: Int, _ location: String?, from server: ServerURL) throws(CLIError) -> String? {
        guard status == 307 || status == 308 else { return nil }
        guard let location, !location.isEmpty else {
            throw .failure("The server at \(server.text) answered \(status) (a redirect) without a Location to go to.")
        }
        return location
    }

    /// The error for a request redirected more than ``limit`` times.
    static func tooMany(from server: ServerURL) -> CLIError {
        .failure("The request to \(server.text) was redirected more than \(Self.limit) times in a row (a redirect loop?).")
    }
}
