import Canopy
import CanopyCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The `.priority` of a location and the `/.settings/rules.json` document.
extension CanopyResponder {
    func priority(_ request: inout Request, method: HTTPRequest.Method, path: DatabasePath, namespace: Namespace, output: Output)
        async throws(RESTError) -> Response
    {
        switch method {
        case .get:
            let node = try await namespace.database.loop { access in access.node(at: path) }
            let priority: Node = node.priority.map { .leaf($0) } ?? .empty
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(priority, export: false, pretty: output.pretty))
        case .put, .delete:
            let argument: ValueConverter.PriorityArgument = method == .put ? try WriteBodies.priority(try await self.body(&request)) : .none
            let written: Node = try await namespace.database.apply { access in
                .write(.setPriority(path, argument)) { access in access.node(at: path).priority.map { .leaf($0) } ?? .empty }
            }
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(NodeWriter.bytes(written, export: false, pretty: output.pretty))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for .priority; use GET, PUT or DELETE.")
        }
    }

    func rules(_ request: inout Request, method: HTTPRequest.Method, namespace: Namespace, output: Output) async throws(RESTError)
        -> Response
    {
        switch method {
        case .get:
            let rules = namespace.rules.withLock { $0 }
            return JSONBody.response(JSONWriter.bytes(rules, options: output.pretty ? [.pretty, .sortedKeys] : [.sortedKeys]))
        case .put:
            let rules = try Rules.parse(try await self.body(&request))
            if let file = namespace.rulesFile {
                let bytes = JSONWriter.bytes(rules, options: [.pretty, .sortedKeys])
                guard FileSystem.writeAtomically(bytes, to: file) else {
                    throw RESTError(.serviceUnavailable, "Could not save the rules.")
                }
            }
            namespace.rules.withLock { $0 = rules }
            if output.silent { return Response(status: .noContent) }
            return JSONBody.response(Array(#"{"status":"ok"}"#.utf8))
        default:
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for rules; use GET or PUT.")
        }
    }
}
