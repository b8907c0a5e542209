import Canopy
import CanopyCore
import HTTPTypes
import Hummingbird
import NIOCore

/// PUT, DELETE, POST and PATCH of a location: applied on the database loop, answered once
/// durable.
extension CanopyResponder {
    /// PUT and DELETE (and a `null` PATCH), with `if-match` compare-and-set.
    func set(
        _ request: Request, path: DatabasePath, value: WriteValue, namespace: Namespace, identity: Identity,
        output: Output
    ) async throws(RESTError) -> Response {
        var write = ClientWrite(write: .set(path, value), identity: identity, wantsNode: true)
        if let ifMatch = request.headers[.ifMatch] { write.condition = .etag(ifMatch) }
        let written = try Self.written(await namespace.submit(write), at: path)
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty), headers: headers)
    }

    func push(path: DatabasePath, value: WriteValue, namespace: Namespace, identity: Identity, output: Output) async throws(RESTError)
        -> Response
    {
        let name = self.state.pushIDs.next(now: self.state.store.configuration.clock())
        let location = path.appending(ChildKey(name))
        let written = try Self.written(
            await namespace.submit(ClientWrite(write: .set(location, value), identity: identity, wantsNode: true)), at: location)
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        var out: [UInt8] = Array(#"{"name":"#.utf8)
        JSONWriter.appendString(name, to: &out)
        out.append(UInt8(ascii: "}"))
        return JSONBody.response(out, headers: headers)
    }

    /// The data a REST write left at its location, or the error its outcome stands for.
    static func written(_ outcome: ClientWriteOutcome, at path: DatabasePath) throws(RESTError) -> Node {
        switch outcome {
        case .written(_, let node): return node ?? .empty
        case .denied: throw RESTError.permissionDenied
        case .stale: throw RESTError(.preconditionFailed, "The data at \(path) changed.")
        case .changed(let etag, let current):
            var error = RESTError(.preconditionFailed, "The data at \(path) changed (its ETag is not the if-match one).")
            error.headers[.eTag] = etag
            // The current value, for one who may read it.
            if let current {
                error.headers[.contentType] = JSONBody.contentType
                error.body = NodeWriter.bytes(current, export: false, pretty: false)
            }
            throw error
        case .failed(let error): throw WriteBodies.error(error)
        }
    }

    func update(
        path: DatabasePath, entries: [WriteOperation.Entry], namespace: Namespace, identity: Identity,
        output: Output
    ) async throws(RESTError) -> Response {
        let write = ClientWrite(write: WriteOperation(path: path, entries: entries), identity: identity, wantsNode: true)
        let root = try Self.written(await namespace.submit(write), at: path)
        let members = entries.filter { !$0.isPriority }.map { entry in
            (key: entry.path.map(\.string).joined(separator: "/"), node: root.node(at: entry.path))
        }
        if output.silent { return Response(status: .noContent) }
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, member) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            if output.pretty { JSONWriter.appendNewline(level: 1, to: &out) }
            JSONWriter.appendString(member.key, to: &out)
            out.append(contentsOf: output.pretty ? Array(": ".utf8) : [UInt8(ascii: ":")])
            let bytes = NodeWriter.bytes(member.node, export: false, pretty: output.pretty)
            out.append(contentsOf: member.node.isEmpty ? Array("null".utf8) : bytes)
        }
        if output.pretty && !members.isEmpty { JSONWriter.appendNewline(level: 0, to: &out) }
        out.append(UInt8(ascii: "}"))
        return JSONBody.response(out)
    }
}
