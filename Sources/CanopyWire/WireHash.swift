package import CanopyCore

extension Node {
    /// The Firebase data hash of this node, as the SDKs compute it for a transaction's
    /// compare-and-set (`p` with `h`) and a listen's cached data (`q` with `h`): base64 of the SHA-1
    /// of a canonical text, or `""` for no data.
    ///
    /// The text is, for a leaf, `<type>:<value>` (`number:` and the 16 hex digits of the IEEE-754
    /// double, big-endian; `string:` and the raw string; `boolean:true|false`), preceded by
    /// `priority:<type>:<value>:` when the node has a priority; for an object, the same priority
    /// prefix, then `:<key>:<child hash>` for each child with a non-empty hash, children in
    /// priority order (no priority, numbers, strings; ties by key).
    ///
    /// - Complexity: O(*n* log *n*) in the number of nodes below this one (the priority sort).
    package var wireHash: String {
        guard let text = self.hashText() else { return "" }
        return SHA1Base64.of(Array(text.utf8))
    }

    private func hashText() -> String? {
        switch self {
        case .empty:
            return nil
        case .leaf(let value):
            return Self.leafText(value)
        case .prioritizedLeaf(let p):
            return "priority:" + Self.leafText(p.priority) + ":" + Self.leafText(p.value)
        case .children(let c):
            var text = c.priority.map { "priority:" + Self.leafText($0) + ":" } ?? ""
            // Collected by CanopyCore's own loop: iterating the map here would be generic code.
            var children: [(key: ChildKey, value: Node)] = []
            children.reserveCapacity(c.map.count)
            self.forEachChild { key, child in
                children.append((key, child))
                return true
            }
            if c.prioritizedChildren > 0 {
                children.sort { a, b in
                    let order = PriorityOrder.compare(a.value.priority, b.value.priority)
                    return order != 0 ? order < 0 : ChildKey.compare(a.key, b.key) < 0
                }
            }
            for (key, child) in children {
                let hash = child.wireHash
                if hash.isEmpty { continue }
                text += ":" + key.string + ":" + hash
            }
            return text.isEmpty ? nil : text
        }
    }

    private static func leafText(_ value: LeafValue) -> String {
        switch value {
        case .bool(let b): return b ? "boolean:true" : "boolean:false"
        case .string(let s): return "string:" + s
        case .int(let i): return "number:" + Self.hex(Double(i))
        case .double(let d): return "number:" + Self.hex(d)
        }
    }

    private static func hex(_ d: Double) -> String {
        let bits = String(d.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - bits.count) + bits
    }
}
