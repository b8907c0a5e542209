/// Writes database nodes as JSON text, children in key order.
package enum NodeWriter {
    /// - Parameters:
    ///   - export: Include priorities (`.priority`, `{".value": …}`), never arrays; otherwise the
    ///     plain value with the array heuristic of ``Node/plainJSON``.
    ///   - pretty: Indent with two spaces.
    package static func bytes(_ node: Node, export: Bool, pretty: Bool) -> [UInt8] {
        var out: [UInt8] = []
        self.append(node, to: &out, export: export, pretty: pretty, level: 0)
        return out
    }

    /// Appends the JSON text of `node` to `out` (see ``bytes(_:export:pretty:)``): a message that
    /// carries a value is written in one buffer, with no copy of the value's text.
    package static func append(_ node: Node, to out: inout [UInt8], export: Bool, pretty: Bool = false) {
        self.append(node, to: &out, export: export, pretty: pretty, level: 0)
    }

    package static func string(_ node: Node, export: Bool = false, pretty: Bool = false) -> String {
        String(decoding: self.bytes(node, export: export, pretty: pretty), as: UTF8.self)
    }

    private static func appendLeaf(_ value: LeafValue, to out: inout [UInt8]) {
        switch value {
        case .bool(let b): out.append(contentsOf: b ? Array("true".utf8) : Array("false".utf8))
        case .int(let i): JSONWriter.appendInt(i, to: &out)
        case .double(let d): JSONWriter.appendDouble(d, to: &out)
        case .string(let s): JSONWriter.appendString(s, to: &out)
        }
    }

    private static func separator(_ out: inout [UInt8], pretty: Bool) {
        out.append(UInt8(ascii: ":"))
        if pretty { out.append(UInt8(ascii: " ")) }
    }

    private static func append(_ node: Node, to out: inout [UInt8], export: Bool, pretty: Bool, level: Int) {
        switch node {
        case .empty:
            out.append(contentsOf: "null".utf8)
        case .leaf(let v):
            self.appendLeaf(v, to: &out)
        case .prioritizedLeaf(let p):
            guard export else { return self.appendLeaf(p.value, to: &out) }
            out.append(UInt8(ascii: "{"))
            if pretty { JSONWriter.appendNewline(level: level + 1, to: &out) }
            JSONWriter.appendString(".value", to: &out)
            self.separator(&out, pretty: pretty)
            self.appendLeaf(p.value, to: &out)
            out.append(UInt8(ascii: ","))
            if pretty { JSONWriter.appendNewline(level: level + 1, to: &out) }
            JSONWriter.appendString(".priority", to: &out)
            self.separator(&out, pretty: pretty)
            self.appendLeaf(p.priority, to: &out)
            if pretty { JSONWriter.appendNewline(level: level, to: &out) }
            out.append(UInt8(ascii: "}"))
        case .children(let c):
            if !export, let length = Node.arrayLength(c.map) {
                out.append(UInt8(ascii: "["))
                var next = 0
                for (key, child) in c.map {
                    let index = Int(key.integer)
                    while next <= index {
                        if next > 0 { out.append(UInt8(ascii: ",")) }
                        if pretty { JSONWriter.appendNewline(level: level + 1, to: &out) }
                        if next < index { out.append(contentsOf: "null".utf8) }
                        next += 1
                    }
                    self.append(child, to: &out, export: false, pretty: pretty, level: level + 1)
                }
                _ = length
                if pretty { JSONWriter.appendNewline(level: level, to: &out) }
                out.append(UInt8(ascii: "]"))
                return
            }
            out.append(UInt8(ascii: "{"))
            var first = true
            for (key, child) in c.map {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                if pretty { JSONWriter.appendNewline(level: level + 1, to: &out) }
                JSONWriter.appendString(key.string, to: &out)
                self.separator(&out, pretty: pretty)
                self.append(child, to: &out, export: export, pretty: pretty, level: level + 1)
            }
            if export, let priority = c.priority {
                out.append(UInt8(ascii: ","))
                if pretty { JSONWriter.appendNewline(level: level + 1, to: &out) }
                JSONWriter.appendString(".priority", to: &out)
                self.separator(&out, pretty: pretty)
                self.appendLeaf(priority, to: &out)
            }
            if pretty { JSONWriter.appendNewline(level: level, to: &out) }
            out.append(UInt8(ascii: "}"))
        }
    }
}
