import CanopyCore
import JWTKit

extension TokenKeys {
    /// The keys in a JWKS document (`{"keys": [{"kty": "RSA", "kid": …, "n": …, "e": …}]}`): RSA
    /// keys for RS256 and EC P-256 keys for ES256; encryption keys (`"use": "enc"`) are skipped.
    static func readJSON(_ text: String) throws(ServerError) -> [TokenKey] {
        let value: JSONValue
        do {
            var builder = JSONValueBuilder()
            value = try JSONParser().parse(text, into: &builder)
        } catch {
            throw ServerError("--jwt-keys: the JSON document is not valid: \(error)")
        }
        guard case .object(let members) = value else {
            throw ServerError("--jwt-keys: expected a JWKS document ({\"keys\": [...]}) or PEM public keys.")
        }
        guard let list = members["keys"] else {
            throw ServerError("--jwt-keys: expected a JWKS document ({\"keys\": [...]}) or PEM public keys.")
        }
        guard case .array(let entries) = list else { throw ServerError("--jwt-keys: the JWKS document's \"keys\" is not an array.") }
        var keys: [TokenKey] = []
        for (index, entry) in entries.enumerated() {
            if let key = try self.readJWK(entry, index: index) { keys.append(key) }
        }
        guard !keys.isEmpty else { throw ServerError("--jwt-keys: the JWKS document holds no signing key.") }
        return keys
    }

    /// The key a JWK describes; `nil` for an encryption key.
    private static func readJWK(_ value: JSONValue, index: Int) throws(ServerError) -> TokenKey? {
        guard case .object(let jwk) = value else {
            throw ServerError("--jwt-keys: key \(index + 1) of the JWKS document is not an object.")
        }
        func string(_ name: String) -> String? {
            if case .string(let s)? = jwk[name] { return s }
            return nil
        }
        let keyID = string("kid")
        let name = "--jwt-keys: key \(index + 1)\(keyID.map { " (kid \"\($0)\")" } ?? "") of the JWKS document"
        if string("use") == "enc" { return nil }
        if jwk["d"] != nil { throw ServerError("\(name) is a private key: give the public keys only.") }
        let algorithm = string("alg")
        switch string("kty") {
        case "RSA":
            guard algorithm == nil || algorithm == "RS256" else { throw ServerError("\(name) is for \(algorithm ?? ""), not RS256.") }
            guard let modulus = string("n"), let exponent = string("e"),
                let key = try? Insecure.RSA.PublicKey(modulus: modulus, exponent: exponent)
            else { throw ServerError("\(name) is not an RSA public key of at least 2048 bits (\"n\" and \"e\").") }
            return TokenKey(material: .rsa(key), keyID: keyID)
        case "EC":
            guard string("crv") == "P-256" else { throw ServerError("\(name) is not on curve P-256, the curve of ES256.") }
            guard algorithm == nil || algorithm == "ES256" else { throw ServerError("\(name) is for \(algorithm ?? ""), not ES256.") }
            guard let x = string("x"), let y = string("y"), let key = try? ES256PublicKey(parameters: (x, y)) else {
                throw ServerError("\(name) is not a P-256 public key (\"x\" and \"y\").")
            }
            return TokenKey(material: .ecdsa(key), keyID: keyID)
        default:
            throw ServerError("\(name) is not an RSA key (RS256) or an EC P-256 key (ES256).")
        }
    }
}
