import CanopyCore

/// A trigger's location pattern: `/restaurants/{restId}/ratings/{ratingId}`, keys and `{name}`
/// wildcards that match any one key.
struct TriggerPattern: Sendable {
    enum Segment: Sendable, Equatable {
        case key(ChildKey)
        case wildcard(String)
    }

    let string: String
    let segments: [Segment]
    /// How many segments are wildcards (the size of ``params(at:)``).
    let wildcardCount: Int

    /// Parses `string`; `function` names the API in the error message.
    ///
    /// - Complexity: O(*L*) for a pattern of *L* bytes.
    init(_ string: String, function: String) throws(DatabaseError) {
        self.string = string
        var segments: [Segment] = []
        var names = Set<String>()
        for raw in string.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let segment = String(Substring(raw))
            if segment.hasPrefix("{") || segment.hasSuffix("}") {
                let name = String(segment.dropFirst().dropLast())
                guard segment.count >= 3, segment.hasPrefix("{"), segment.hasSuffix("}"), Self.isValidName(name) else {
                    throw Self.invalid(
                        string, function: function, "its wildcard \"\(segment)\" must be {name}, a name of letters, digits or _")
                }
                guard names.insert(name).inserted else {
                    throw Self.invalid(string, function: function, "the wildcard {\(name)} appears twice")
                }
                segments.append(.wildcard(name))
            } else if KeyValidation.isValidPathSegment(segment) {
                segments.append(.key(ChildKey(segment)))
            } else {
                throw Self.invalid(
                    string, function: function,
                    "its segment \"\(segment)\" is not a valid key (keys can't contain \".\", \"#\", \"$\", \"[\", or \"]\")")
            }
        }
        guard segments.count <= KeyValidation.maxDepth else {
            throw Self.invalid(string, function: function, "it is deeper than \(KeyValidation.maxDepth) keys")
        }
        self.segments = segments
        self.wildcardCount = names.count
    }

    /// The wildcards' values at `location`, a path this pattern matches.
    func params(at location: [ChildKey]) -> [String: String] {
        // Sized up front: no growing (and rehashing) as the names go in.
        var params = [String: String](minimumCapacity: self.wildcardCount)
        for (segment, key) in zip(self.segments, location) {
            if case .wildcard(let name) = segment { params[name] = key.string }
        }
        return params
    }

    private static func isValidName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
            }
    }

    private static func invalid(_ pattern: String, function: String, _ reason: String) -> DatabaseError {
        DatabaseError(.invalidPath, "\(function) failed: pattern \"\(pattern)\" is invalid: \(reason).")
    }
}
