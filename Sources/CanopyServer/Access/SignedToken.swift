import CanopyCore
import Foundation

/// A compact JWT taken apart, before its signature or claims are checked: the algorithm and key
/// id its header names, and its claims.
struct SignedToken: Sendable {
    /// The header's `alg` (`HS256`, `RS256`, `ES256`, `none`, …).
    var algorithm: String
    /// The header's `kid`, naming the key it was signed with.
    var keyID: String?
    /// The payload: every claim.
    var claims: [String: JSONValue]

    /// Parses `token`: three base64url parts (the last, the signature, may be empty for
    /// `alg: none`), a header object with a string `alg` and a payload object.
    init(parsing token: String) throws(TokenRejection) {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
            case .object(let header)? = Self.decodeJSON(parts[0]), case .string(let algorithm)? = header["alg"],
            case .object(let claims)? = Self.decodeJSON(parts[1])
        else { throw .notJWT }
        switch header["kid"] {
        case .string(let kid)?: self.keyID = kid
        case nil, .null?: self.keyID = nil
        default: throw .notJWT
        }
        self.algorithm = algorithm
        self.claims = claims
    }

    /// The JSON value in a base64url part, or `nil`.
    private static func decodeJSON(_ part: Substring.UTF8View.SubSequence) -> JSONValue? {
        guard let bytes = Self.base64URLDecoded(part) else { return nil }
        var builder = JSONValueBuilder()
        return try? JSONParser().parse(bytes, into: &builder)
    }

    /// Decodes unpadded base64url (RFC 7515 §2); `nil` if `part` is not that.
    static func base64URLDecoded(_ part: some Collection<UInt8>) -> [UInt8]? {
        var base64 = [UInt8]()
        base64.reserveCapacity(part.count + 3)
        for byte in part {
            switch byte {
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): return nil
            default: base64.append(byte)
            }
        }
        if base64.count % 4 == 1 { return nil }
        while base64.count % 4 != 0 { base64.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(base64)).map { [UInt8]($0) }
    }
}
