import CanopyCore
import Foundation
import JWTKit
import Synchronization

/// The claims test tokens carry; `nil` ones are left out.
struct TokenTestClaims: JWTPayload {
    var sub: String?
    var exp: Int?
    var iat: Int?
    var nbf: Int?
    var name: String?
    var aud: [String]?
    var iss: String?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// A fixed time (seconds since 1970) that tests move by hand.
final class TokenTestClock: Sendable {
    let now = Mutex<Double>(1_800_000_000)
    var seconds: Double { self.now.withLock { $0 } }
    func advance(_ by: Double) { self.now.withLock { $0 += by } }
}

/// The text of a file in Fixtures/.
func keyFixture(_ name: String) throws -> String {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").appendingPathComponent(name)
    return try String(contentsOf: url, encoding: .utf8)
}

/// Unpadded base64url.
func base64URL(_ bytes: some Sequence<UInt8>) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A token built by hand: `header` and `payload` JSON as given, any signature.
func rawToken(header: String, payload: String, signature: String = "") -> String {
    "\(base64URL(Array(header.utf8))).\(base64URL(Array(payload.utf8))).\(signature)"
}

/// The token the Firebase JS SDK's `createMockUserToken({sub}, undefined)` builds for
/// `connectDatabaseEmulator(db, host, port, {mockUserToken: {sub}})`: the header and the payload
/// as `JSON.stringify` writes them (key order included), base64url without padding, and an empty
/// signature.
func sdkMockUserToken(sub: String) -> String {
    let payload =
        #"{"iss":"https://securetoken.google.com/demo-project","aud":"demo-project","iat":0,"exp":3600,"auth_time":0,"sub":"\#(sub)","user_id":"\#(sub)","firebase":{"sign_in_provider":"custom","identities":{}}}"#
    return rawToken(header: #"{"alg":"none","type":"JWT"}"#, payload: payload)
}
