import Canopy
import CanopyCore
import HTTPTypes

/// What a request addresses: the target, the decoded query parameters.
struct RESTTarget {
    enum Kind {
        /// A location (`/a/b.json`).
        case data(DatabasePath)
        /// The priority of a location (`/a/b/.priority.json`).
        case priority(DatabasePath)
        /// `/.settings/rules.json`.
        case rules
        /// `/.settings/rules/simulate.json`: a read or write judged by rules, not made.
        case rulesSimulation
        /// `/.inspect/databases.json`: the namespaces (as the Firebase emulator lists them).
        case databases
        /// `/.metrics`: the server's metrics, in Prometheus' text format.
        case metrics
    }

    var kind: Kind
    var parameters: [String: String]

    /// Parses the request target (`/path.json?query`), percent-decoding path segments and query
    /// values (a `+` stays a plus, as firebase-admin means it).
    init(uri: String) throws(RESTError) {
        let raw = uri.utf8
        let queryStart = raw.firstIndex(of: UInt8(ascii: "?"))
        let pathPart = Substring(uri.utf8[..<(queryStart ?? raw.endIndex)])
        var parameters: [String: String] = [:]
        if let queryStart {
            let query = Substring(uri.utf8[raw.index(after: queryStart)...])
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let name: Substring
                let value: Substring
                if let eq = pair.firstIndex(of: "=") {
                    name = pair[..<eq]
                    value = pair[pair.index(after: eq)...]
                } else {
                    name = pair
                    value = ""
                }
                let decodedName = try Self.percentDecode(name, what: "query parameter name")
                // Two orderBy (or limitToFirst, print…) are a mistake, not a choice of the last one.
                guard parameters[decodedName] == nil else {
                    throw .badRequest("\(decodedName) is given twice; give each query parameter once.")
                }
                parameters[decodedName] = try Self.percentDecode(value, what: "query parameter \(name)")
            }
        }
        self.parameters = parameters
        if pathPart == "/.metrics" {
            self.kind = .metrics
            return
        }
        guard pathPart.hasSuffix(".json") else {
            throw .badRequest(
                "Unsupported path \"\(pathPart)\": REST locations end in .json (for example /users/ada.json, or /.json for the root).")
        }
        let stem = pathPart.dropLast(5)
        var segments: [String] = []
        for segment in stem.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            segments.append(try Self.percentDecode(Substring(segment), what: "path"))
        }
        if segments == [".settings", "rules"] {
            self.kind = .rules
            return
        }
        if segments == [".settings", "rules", "simulate"] {
            self.kind = .rulesSimulation
            return
        }
        if segments == [".inspect", "databases"] {
            self.kind = .databases
            return
        }
        var isPriority = false
        if segments.last == ".priority" {
            isPriority = true
            segments.removeLast()
        }
        var keys: [ChildKey] = []
        keys.reserveCapacity(segments.count)
        var bytes = 0
        for segment in segments {
            guard KeyValidation.isValidKey(segment) || (keys.isEmpty && segment == ".info") else {
                throw .badRequest(
                    "Invalid path \"\(Self.display(segments))\": keys must be non-empty and can't contain \".\", \"#\", \"$\", \"[\", \"]\" or control characters."
                )
            }
            bytes += 1 + segment.utf8.count
            keys.append(ChildKey(segment))
        }
        if keys.count > KeyValidation.maxDepth {
            throw .badRequest("Invalid path \"\(Self.display(segments))\": deeper than \(KeyValidation.maxDepth) levels.")
        }
        if bytes > KeyValidation.maxPathBytes {
            throw .badRequest("Invalid path: longer than \(KeyValidation.maxPathBytes) bytes.")
        }
        let path = DatabasePath(keys)
        self.kind = isPriority ? .priority(path) : .data(path)
    }

    private static func display(_ segments: [String]) -> String { "/" + segments.joined(separator: "/") }

    static func percentDecode(_ text: Substring, what: String) throws(RESTError) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var it = Array(text.utf8)[...]
        while let b = it.popFirst() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard it.count >= 2, let hi = Self.hex(it[it.startIndex]), let lo = Self.hex(it[it.startIndex + 1]) else {
                throw .badRequest("Invalid percent-encoding in the \(what).")
            }
            out.append(hi << 4 | lo)
            it = it.dropFirst(2)
        }
        guard let decoded = String(validating: out, as: UTF8.self) else {
            throw .badRequest("Invalid UTF-8 in the \(what).")
        }
        return decoded
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
