import CanopyCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// A request that fails: its status and the message of the `{"error": …}` body.
struct RESTError: Error {
    var status: HTTPResponse.Status
    var message: String
    var headers: HTTPFields = [:]
    /// A body other than `{"error": message}` (a 412's current value).
    var body: [UInt8]?
    /// For a `307`: the base URL (`http://HOST:PORT`) of the node that serves the namespace; the
    /// responder adds the request's target to it as the `Location`.
    var redirect: String?

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    static func badRequest(_ message: String) -> RESTError { RESTError(.badRequest, message) }

    /// The namespace `name` is served by the cluster node at `base` (`http://HOST:PORT`).
    static func redirect(_ name: String, to base: String) -> RESTError {
        var error = RESTError(.temporaryRedirect, "Namespace \"\(name)\" is served by \(base).")
        error.redirect = base
        return error
    }

    /// What rules refusing a read or write answers (Firebase's status and words; nothing about
    /// the data or the rules).
    static let permissionDenied = RESTError(.unauthorized, "Permission denied")

    /// The status for a database error: the caller's mistakes are 400, a closed database 503.
    init(_ error: DatabaseError) {
        switch error.code {
        case .closed, .ioError, .corrupted, .inUse, .clusterUnavailable, .notLeader: self.init(.serviceUnavailable, error.message)
        default: self.init(.badRequest, error.message)
        }
    }

    var response: Response {
        if let body = self.body {
            var headers = self.headers
            headers[.contentType] = JSONBody.contentType
            return Response(status: self.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        var out: [UInt8] = Array(#"{"error":"#.utf8)
        JSONWriter.appendString(self.message, to: &out)
        out.append(UInt8(ascii: "}"))
        var headers = self.headers
        headers[.contentType] = JSONBody.contentType
        return Response(status: self.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: out)))
    }
}
