import CanopyConnection
import CanopyCore
import NIOHTTP1

/// The command line's REST and event-stream requests to `canopy serve`, on the package's
/// ``HTTPClient``: redirects followed (``Redirect``), failures and error statuses turned into
/// ``CLIError``s.
enum ServerClient {
    /// One client for the whole command, so that its requests to a server share a connection.
    static let http = HTTPClient(userAgent: "canopy-cli")

    typealias Response = HTTPClient.Response

    /// Sends one request and returns the response; an error status becomes a `CLIError` with the
    /// server's message (400: usage, others: failure). `headers` are added to the request's. A
    /// redirect (307, 308) is followed (``Redirect``): the same method, body and headers go to
    /// its `Location`.
    static func send(
        _ server: ServerURL, _ method: HTTPMethod, _ target: String, body: [UInt8]? = nil, headers: [(String, String)] = []
    ) async throws(CLIError) -> Response {
        var request = Redirect.Request(server: server, target: target, headers: headers)
        for _ in 0...Redirect.limit {
            let response: Response
            do {
                response = try await self.http.send(
                    method, host: request.server.host, port: request.server.port, request.target,
                    headers: [("Accept", "application/json")] + request.headers, body: body)
            } catch {
                throw Self.error(error, at: request.server, what: "The connection to")
            }
            if let location = try Redirect.location(of: response.status, response.location, from: request.server) {
                request = try request.following(location)
                continue
            }
            guard (200..<300).contains(response.status) else { throw Self.error(response) }
            return response
        }
        throw Redirect.tooMany(from: server)
    }

    /// Opens an event stream at `target` and calls `event` with each event's name and data until
    /// the server closes it (then returns) or the connection fails (then throws). A redirect
    /// (307, 308) is followed before the stream starts (``Redirect``).
    static func stream(_ server: ServerURL, _ target: String, event: @Sendable @escaping (String, [UInt8]) throws(CLIError) -> Void)
        async throws(CLIError)
    {
        var request = Redirect.Request(server: server, target: target, headers: [])
        for _ in 0...Redirect.limit {
            let response: Response
            do {
                response = try await self.http.stream(
                    host: request.server.host, port: request.server.port, request.target, headers: request.headers, event: event)
            } catch let error as CLIError {
                throw error
            } catch let error as HTTPClient.Failure {
                throw Self.error(error, at: request.server, what: "The stream from")
            } catch {
                throw .unavailable("The stream from \(request.server.text) failed: \(error).")
            }
            if let location = try Redirect.location(of: response.status, response.location, from: request.server) {
                request = try request.following(location)
                continue
            }
            guard response.status == 200 else { throw Self.error(response) }
            return
        }
        throw Redirect.tooMany(from: server)
    }

    /// The error a failed exchange with `server` stands for.
    private static func error(_ failure: HTTPClient.Failure, at server: ServerURL, what: String) -> CLIError {
        failure.sent
            ? .unavailable("\(what) \(server.text) failed: \(failure.reason).")
            : .unavailable("Cannot reach the server at \(server.text): \(failure.reason).")
    }

    /// The error a non-2xx response stands for.
    static func error(_ response: Response) -> CLIError {
        var message = String(decoding: response.body, as: UTF8.self)
        var builder = JSONValueBuilder()
        if let json = try? JSONParser().parse(response.body, into: &builder), case .string(let text)? = json["error"] {
            message = text
        }
        let text = "The server refused the request (HTTP \(response.status)): \(message)"
        return response.status == 400 ? .usage(text) : .failure(text)
    }
}
