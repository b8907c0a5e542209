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
        let ifMatch = request.headers[.ifMatch]
        let write = WriteOperation.set(path, value)
        let written: Node = try await namespace.database.apply { access in
            // Rules first: a refused writer learns nothing of the data, not even that it changed.
            guard let write = namespace.permitted(write, identity: identity, access: access) else { return .refuse(.permissionDenied) }
            if let ifMatch {
                let current = access.node(at: path)
                let etag = ETag.of(current)
                if etag != ifMatch {
                    var error = RESTError(.preconditionFailed, "The data at \(path) changed (its ETag is not the if-match one).")
                    error.headers[.eTag] = etag
                    // The current value, for one who may read it.
                    guard namespace.mayRead(path, query: nil, identity: identity, access: access) else { return .refuse(error) }
                    error.headers[.contentType] = JSONBody.contentType
                    return .refuse(error, body: NodeWriter.bytes(current, export: false, pretty: false))
                }
            }
            return .write(write) { access in access.node(at: path) }
        }
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty), headers: headers)
    }

    func push(path: DatabasePath, value: WriteValue, namespace: Namespace, identity: Identity, output: Output) async throws(RESTError)
        -> Response
    {
        let pushIDs = self.state.pushIDs
        let (name, written): (String, Node) = try await namespace.database.apply { access in
            let name = pushIDs.next(now: access.now())
            let location = path.appending(ChildKey(name))
            guard let write = namespace.permitted(.set(location, value), identity: identity, access: access) else {
                return .refuse(.permissionDenied)
            }
            return .write(write) { access in (name, access.node(at: location)) }
        }
        var headers: HTTPFields = [:]
        if output.wantsETag { headers[.eTag] = ETag.of(written) }
        if output.silent { return Response(status: .noContent, headers: headers) }
        var out: [UInt8] = Array(#"{"name":"#.utf8)
        JSONWriter.appendString(name, to: &out)
        out.append(UInt8(ascii: "}"))
        return JSONBody.response(out, headers: headers)
    }

    func update(
        path: DatabasePath, entries: [WriteOperation.Entry], namespace: Namespace, identity: Identity,
        output: Output
    ) async throws(RESTError) -> Response {
        let write = WriteOperation(path: path, entries: entries)
        let members: [(key: String, node: Node)] = try await namespace.database.apply { access in
            guard let write = namespace.permitted(write, identity: identity, access: access) else { return .refuse(.permissionDenied) }
            return .write(write) { access in
                let root = access.node(at: path)
                return entries.filter { !$0.isPriority }.map { entry in
                    (entry.path.map(\.string).joined(separator: "/"), root.node(at: entry.path))
                }
            }
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
