import HTTPTypes
import Hummingbird
import NIOCore

/// JSON response bodies.
enum JSONBody {
    static let contentType = "application/json; charset=utf-8"

    static func response(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
