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
        if let request = options.aggregate {
            return try await self.aggregate(request, path: path, query: query, namespace: namespace, identity: identity, output: output)
        }
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
        let body = NodeWriter.bytes(result, export: options.export, pretty: output.pretty)
        let limit = self.state.configuration.maxResponseBytes
        guard body.count <= limit else { throw .badRequest(ResponseLimit.exceeded(limit)) }
        return JSONBody.response(body, headers: headers)
    }

    /// GET with `aggregate=`: the aggregate of the query's range as a JSON object (each term's
    /// name to its value), after the same read check as the query itself.
    private func aggregate(
        _ request: AggregateRequest, path: DatabasePath, query: QueryParams?, namespace: Namespace, identity: Identity, output: Output
    ) async throws(RESTError) -> Response {
        let result: AggregateResult? = try await namespace.database.loop { access in
            guard namespace.mayRead(path, query: query, identity: identity, access: access) else { return nil }
            return access.aggregate(at: path, params: query ?? .default, request: request)
        }
        guard let result else { throw RESTError.permissionDenied }
        if output.silent { return Response(status: .noContent) }
        return JSONBody.response(Array(result.json.jsonString(pretty: output.pretty).utf8))
    }
}
