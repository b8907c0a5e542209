package import CanopyCore

extension Node {
    /// The node as JSON text for the wire: priorities as `.priority` (leaves with one as
    /// `{".value": v, ".priority": p}`), objects never turned into arrays, `null` when empty.
    package var wireJSON: [UInt8] { NodeWriter.bytes(self, export: true, pretty: false) }
}

extension WriteValue {
    /// The value as JSON text for the wire, with its server values put back as the placeholders
    /// the server resolves: `{".sv":"timestamp"}`, `{".sv":{"increment":n}}`.
    ///
    /// - Complexity: O(*n*) in the value's size; a value with placeholders is rebuilt as a
    ///   ``JSONValue`` once.
    package var wireJSON: [UInt8] {
        guard !self.placeholders.isEmpty else { return self.node.wireJSON }
        var json = self.node.exportJSON
        for placeholder in self.placeholders {
            Self.put(placeholder, at: placeholder.path[...], into: &json)
        }
        return JSONWriter.bytes(json)
    }

    private static func put(_ placeholder: Placeholder, at path: ArraySlice<ChildKey>, into json: inout JSONValue) {
        guard let key = path.first else {
            let sv: JSONValue
            switch placeholder.value {
            case .timestamp: sv = [".sv": "timestamp"]
            case .increment(let delta): sv = [".sv": ["increment": delta.jsonValue]]
            }
            // The export form of a node with a priority is an object holding `.priority` (and
            // `.value` for a leaf); otherwise the placeholder is the whole value.
            if case .object(var members) = json {
                if placeholder.isPriority {
                    members[".priority"] = sv
                } else if members[".value"] != nil {
                    members[".value"] = sv
                } else {
                    json = sv
                    return
                }
                json = .object(members)
            } else if !placeholder.isPriority {
                json = sv
            }
            return
        }
        guard case .object(var members) = json, var child = members[key.string] else { return }
        // Keep the storage of the object and of the child unique while they are edited.
        json = .null
        members[key.string] = nil
        self.put(placeholder, at: path.dropFirst(), into: &child)
        members[key.string] = child
        json = .object(members)
    }
}
