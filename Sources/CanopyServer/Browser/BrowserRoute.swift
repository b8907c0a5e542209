import HTTPTypes
import Hummingbird
import NIOCore

/// Where `canopy serve` answers the data browser: `GET /_/` and the files beside it.
///
/// REST locations always end in `.json` (`/.json`, `/users/ada.json`), so a path under `/_/` that
/// does not end in `.json` can never be a REST request; `/_/x.json` stays the REST location of key
/// `_`. A browser asking for `/` (which is not a REST location either) is redirected to `/_/`;
/// any other client asking for `/` gets the REST error it always got.
enum BrowserRoute {
    static let prefix = "/_/"

    /// Only this origin's files and REST/SSE: no inline code, no other site, no framing.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The response for a browser request, or `nil` when `request` is a REST (or WebSocket) one.
    static func response(for request: Request) -> Response? {
        let path = request.uri.path
        guard request.method == .get || request.method == .head else { return nil }
        if path == "/" {
            guard let accept = request.headers[.accept], accept.contains("text/html") else { return nil }
            return Response(status: .found, headers: [.location: Self.prefix, .cacheControl: "no-store"])
        }
        guard path.hasPrefix(Self.prefix), !path.hasSuffix(".json") else { return nil }
        let name = String(path.dropFirst(Self.prefix.count))
        guard let asset = BrowserAsset.all[name] else {
            return RESTError(.notFound, "No data browser file \"\(path)\"; the data browser is at \(Self.prefix).").response
        }
        let bytes = Array(asset.text.utf8)
        let headers: HTTPFields = [
            .contentType: asset.contentType,
            .contentLength: "\(bytes.count)",
            // Small, and must change with the binary: revalidated on every load.
            .cacheControl: "no-cache",
            .contentSecurityPolicy: Self.contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .xFrameOptions: "DENY",
            .referrerPolicy: "no-referrer",
        ]
        if request.method == .head { return Response(status: .ok, headers: headers) }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
