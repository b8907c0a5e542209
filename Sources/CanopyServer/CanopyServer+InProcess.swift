import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// What a request answered in-process carries instead of a connection.
private struct DetachedContextSource: RequestContextSource {
    let logger: Logger
}

extension CanopyRequestContext {
    /// A context without a connection.
    fileprivate init(detachedLogger logger: Logger) {
        self.coreContext = .init(source: DetachedContextSource(logger: logger))
        self.channel = nil
    }
}

/// Gathers a response body.
private final class CollectedBody: ResponseBodyWriter {
    var bytes: [UInt8] = []

    func write(_ buffer: ByteBuffer) async throws { self.bytes += buffer.readableBytesView }
    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}

extension CanopyServer {
    /// The answer to ``respond(method:target:headers:body:)``.
    package struct InProcessResponse: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]

        package func header(_ name: String) -> String? {
            self.headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// Answers one request without a connection: the REST handler as a function, for fuzzing
    /// and tests. `nil` for what never reaches the handler over HTTP (a method or header name
    /// that is not an HTTP token) and for event streams, which need a connection.
    package func respond(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) async
        -> InProcessResponse?
    {
        guard let method = HTTPRequest.Method(method) else { return nil }
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else { return nil }
            fields.append(HTTPField(name: name, value: value))
        }
        if fields[values: .accept].contains(where: { $0.contains("text/event-stream") }) { return nil }
        let head = HTTPRequest(method: method, scheme: nil, authority: nil, path: target, headerFields: fields)
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let responder = CanopyResponder(state: self.state)
        let response: Response
        do {
            response = try await responder.respond(to: request, context: CanopyRequestContext(detachedLogger: self.configuration.logger))
        } catch {
            // The responder turns its own errors into responses; anything else would be a 500.
            return InProcessResponse(status: 500, headers: [], body: Array("\(error)".utf8))
        }
        let collected = CollectedBody()
        do {
            try await response.body.write(collected)
        } catch {
            return InProcessResponse(status: 500, headers: [], body: Array("\(error)".utf8))
        }
        return InProcessResponse(
            status: response.status.code,
            headers: response.headers.map { (name: $0.name.rawName, value: $0.value) },
            body: collected.bytes
        )
    }
}
