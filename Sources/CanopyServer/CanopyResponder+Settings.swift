import Canopy
import CanopyCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The `.priority` of a location and the `/.settings/rules.json` document.
extension CanopyResponder {
    func priority(
        _ request: inout Request, method: HTTPRequest.Method, path: DatabasePath, namespace: Namespace, identity: Identity, output: Output
    ) async throws(RESTError) -> Response {
        switch method {
        case .get:
            let node: Node? = try await namespace.database.loop { access in
                namespace.mayRead(path, query: nil, identity: identity, access: access) ? access.node(at: path) : nil
            }
            guard let node else { throw RESTError.permissionDenied }
            let priority: Node = node.priority.map { .leaf($0) } ?? .empty
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(priority, export: false, pretty: output.pretty))
        case .put, .delete:
            let argument: ValueConverter.PriorityArgument = method == .put ? try WriteBodies.priority(try await self.body(&request)) : .none
            let node = try Self.written(
                await namespace.submit(ClientWrite(write: .setPriority(path, argument), identity: identity, wantsNode: true)), at: path)
            let written: Node = node.priority.map { .leaf($0) } ?? .empty
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for .priority; use GET, PUT or DELETE.")
        }
    }

    /// `/.settings/rules.json`: the rules as they were given (comments included), and their
    /// replacement: checked first (a document that does not compile changes nothing), kept durably,
    /// then in force for every later request; listeners they no longer allow are cancelled.
    func rules(_ request: inout Request, method: HTTPRequest.Method, namespace: Namespace, output: Output) async throws(RESTError)
        -> Response
    {
        switch method {
        case .get:
            let source = namespace.rules.withLock { $0.source }
            return JSONBody.response(Array(source.utf8))
        case .put:
            // Rules are set where they are kept: at the namespace's leader.
            if let follower = namespace.follower {
                var error = RESTError.redirect(namespace.name, to: follower.forwarder.leader)
                error.headers[.location] = follower.forwarder.leader + request.uri.description
                throw error
            }
            let body = try await self.body(&request)
            guard let text = String(validating: body, as: UTF8.self) else { throw .badRequest("Invalid rules: the document is not UTF-8.") }
            let rules: NamespaceRules
            do {
                rules = try NamespaceRules(source: text)
            } catch {
                throw .badRequest(error.report)
            }
            try await namespace.replaceRules(with: rules)
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(Array(#"{"status":"ok"}"#.utf8))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for rules; use GET or PUT.")
        }
    }
}

extension CanopyResponder {
    /// `/.inspect/databases.json` (the Firebase emulator's listing): the namespaces open or kept
    /// in the store's directory, as `[{"name": …}]` sorted by name. Only the administrator may list
    /// them on a guarded server.
    func databases(method: HTTPRequest.Method, identity: Identity, output: Output) async throws(RESTError) -> Response {
        guard method == .get else { throw RESTError(.methodNotAllowed, "Method \(method) is not supported for databases; use GET.") }
        guard identity.isAdmin || !self.state.isGuarded else { throw RESTError.permissionDenied }
        if output.silent { return Response(status: .noContent) }
        var names = Set(self.state.store.names())
        names.insert(self.state.configuration.defaultNamespace)
        var out: [UInt8] = [UInt8(ascii: "[")]
        for (index, name) in names.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out += Array(#"{"name":"#.utf8)
            JSONWriter.appendString(name, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return JSONBody.response(out)
    }

    /// `GET /.metrics`: the server's metrics (``ServerMetrics``) in Prometheus' text format;
    /// administrators only once the server is guarded (`--auth-token` or user tokens).
    func metrics(method: HTTPRequest.Method, identity: Identity) throws(RESTError) -> Response {
        guard method == .get || method == .head else {
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for metrics; use GET.")
        }
        guard identity.isAdmin || !self.state.isGuarded else { throw RESTError.permissionDenied }
        let bytes = self.state.metrics.render(state: self.state)
        let headers: HTTPFields = [
            .contentType: "text/plain; version=0.0.4; charset=utf-8", .contentLength: "\(bytes.count)", .cacheControl: "no-store",
        ]
        return Response(
            status: .ok, headers: headers, body: method == .head ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
