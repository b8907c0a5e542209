import Canopy
import CanopyCore
import HTTPTypes
import Hummingbird
import NIOCore

/// GET of a location: the value (or a query's window, a shallow listing), with ETags.
extension CanopyResponder {
    func read(
        _ request: Request, path: DatabasePath, options: ReadOptions, namespace: Namespace, identity: Identity,
        output: Output
    ) async throws(RESTError) -> Response {
        if request.headers[.ifMatch] != nil {
            throw .badRequest("if-match is not supported for GET; use if-none-match.")
        }
        let query = options.hasFilters ? options.query : nil
        let node: Node? = try await namespace.database.loop { access in
            namespace.mayRead(path, query: query, identity: identity, access: access) ? access.node(at: path) : nil
        }
        guard let node else { throw RESTError.permissionDenied }
        let result = options.apply(node)
        var headers: HTTPFields = [:]
        let ifNoneMatch = request.headers[.ifNoneMatch]
        if output.wantsETag || ifNoneMatch != nil {
            let etag = ETag.of(result)
            if let ifNoneMatch, ifNoneMatch == etag {
                return Response(status: .notModified, headers: [.eTag: etag])
            }
            headers[.eTag] = etag
        }
        if output.silent { return Response(status: .noContent, headers: headers) }
        return JSONBody.response(NodeWriter.bytes(result, export: options.export, pretty: output.pretty), headers: headers)
    }
}
