import Crypto
import Foundation

// User tokens for the server child (B12): HS256 JWTs signed with swift-crypto's HMAC.

/// A JWT for user `uid` signed with `secret` (HS256): claims `sub`, `iat` (now) and `exp` (in an hour).
func hs256Token(uid: String, secret: [UInt8]) -> String {
    let now = Int(Date().timeIntervalSince1970)
    let header = base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
    let claims = base64URL(Array("{\"sub\":\(jsonQuoted(uid)),\"iat\":\(now),\"exp\":\(now + 3600)}".utf8))
    let signingInput = header + "." + claims
    let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: SymmetricKey(data: secret))
    return signingInput + "." + base64URL(Array(mac))
}

/// `bytes` in base64url without padding (RFC 7515).
func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
