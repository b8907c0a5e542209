import Crypto
import Foundation

/// The base64 (standard alphabet, padded) of the SHA-1 of some bytes: Firebase's data hash and the
/// REST API's ETags are both this. Not used where collision resistance matters.
package enum SHA1Base64 {
    /// - Complexity: O(*m*) in the number of bytes.
    package static func of(_ bytes: [UInt8]) -> String {
        Data(Insecure.SHA1.hash(data: bytes)).base64EncodedString()
    }
}
