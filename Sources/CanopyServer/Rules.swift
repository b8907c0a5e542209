import CanopyCore
import Foundation

/// The `/.settings/rules.json` document: kept and returned, not enforced (every authorized
/// request is an admin request), so that clients that install `.indexOn` rules work.
enum Rules {
    /// Parses a rules document: JSON with `//` and `/* */` comments (firebase-tools sends the rules
    /// file as written); it must be an object with an object `rules` member.
    static func parse(_ bytes: [UInt8]) throws(RESTError) -> JSONValue {
        let text = self.stripComments(bytes)
        let value: JSONValue
        do {
            var builder = JSONValueBuilder()
            value = try JSONParser().parse(text, into: &builder)
        } catch {
            throw .badRequest("Invalid rules: couldn't parse JSON: \(error)")
        }
        guard case .object(let members) = value, case .object? = members["rules"] else {
            throw .badRequest("Invalid rules: expected an object with a \"rules\" object, like {\"rules\": {\".read\": true}}.")
        }
        return value
    }

    /// `bytes` without comments outside strings.
    static func stripComments(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        var inString = false
        while i < bytes.count {
            let b = bytes[i]
            if inString {
                out.append(b)
                if b == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    out.append(bytes[i + 1])
                    i += 2
                    continue
                }
                if b == UInt8(ascii: "\"") { inString = false }
                i += 1
                continue
            }
            if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "/"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "/") {
                while i < bytes.count && bytes[i] != UInt8(ascii: "\n") { i += 1 }
                continue
            } else if b == UInt8(ascii: "/"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "*") {
                i += 2
                while i + 1 < bytes.count && !(bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
                out.append(UInt8(ascii: " "))
                continue
            }
            out.append(b)
            i += 1
        }
        return out
    }
}
