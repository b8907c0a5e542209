import Canopy
import CanopyCore
import CanopyServer

extension FuzzTarget {
    /// Path and key parsing, in the library and in the REST handler.
    ///
    /// Properties: the library accepts a path or reports `.invalidPath` naming it; an accepted
    /// path prints back to itself; a reference never traps; the REST handler answers 200 exactly
    /// when the library accepts the path (within the depth and length limits), with the value
    /// stored there, and 400 with a JSON error otherwise.
    public static let path = FuzzTarget(
        name: "path",
        dictionary: [
            "/", "//", ".", "#", "$", "[", "]", ".info", ".priority", ".settings/rules", "%2F", "%2E", "%", "%ZZ", "\u{7F}", "\u{0}",
            "items", "a", "n",
        ]
    ) { bytes throws(FuzzFailure) in
        let text = String(decoding: bytes, as: UTF8.self)
        var libraryPath: DatabasePath?
        do {
            let path = try DatabasePath(validating: text, function: "child")
            let again: DatabasePath
            do throws(DatabaseError) { again = try DatabasePath(validating: path.string, function: "child") } catch {
                throw FuzzFailure("the printed path \(path.string) of \(describe(bytes)) does not parse: \(error.message)")
            }
            try require(again == path, "printing changed the path \(describe(bytes))")
            libraryPath = path
        } catch let error as DatabaseError {
            try require(error.code == .invalidPath, "path parsing threw \(error.code) for \(describe(bytes))")
            try require(error.message.contains("\"\(text)\""), "the path error does not name the path: \(error.message)")
        } catch {
            throw FuzzFailure("\(error)")
        }
        var childError: DatabaseError?
        do throws(DatabaseError) { _ = try FuzzServer.reads.database.reference().validatedChild(text) } catch { childError = error }
        try require(
            (childError == nil) == (libraryPath != nil && !text.isEmpty),
            "child(\(describe(bytes))) and path parsing disagree: \(childError?.message ?? "accepted")")

        // The same path over REST: every byte percent-encoded but the slashes.
        var target = "/"
        for b in bytes {
            if b == UInt8(ascii: "/") || (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) {
                target.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                target += "%" + String(b >> 4, radix: 16, uppercase: true) + String(b & 15, radix: 16, uppercase: true)
            }
        }
        target += ".json"
        guard let response = FuzzServer.reads.respond(method: "GET", target: target) else {
            throw FuzzFailure("the server declined a plain GET of \(target)")
        }
        let segments = text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true).map { String(Substring($0)) }
        if segments.last == ".priority" || segments == [".settings", "rules"] { return }
        try requireErrorBody(response, allowed: [200, 400], request: "GET \(target)")
        let validUTF8 = String(validating: bytes, as: UTF8.self) != nil
        let pathBytes = segments.reduce(0) { $0 + 1 + $1.utf8.count }
        let withinLimits = segments.count <= KeyValidation.maxDepth && pathBytes <= KeyValidation.maxPathBytes
        if let libraryPath, validUTF8, withinLimits {
            try require(
                response.status == 200,
                "the library accepts \(describe(bytes)) but REST answered \(response.status) \(describe(response.body))")
            if !libraryPath.isInfo {
                let expected = NodeWriter.bytes(FuzzServer.reads.tree().node(at: libraryPath.keys), export: false, pretty: false)
                try require(response.body == expected, "GET \(target) answered \(describe(response.body)), not \(describe(expected))")
            }
        } else {
            try require(
                response.status == 400,
                "the library refuses \(describe(bytes)) (or it is past the limits) but REST answered \(response.status)")
        }
    }
}
