import CanopyCore

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
        var bytes: [UInt8] = []
        bytes.reserveCapacity(part.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in part {
            let value: UInt8
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = character - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = character - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0") + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // A lone final character carries no whole byte; left-over bits must be zero.
        guard bits < 6, accumulator & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return bytes
    }
}
