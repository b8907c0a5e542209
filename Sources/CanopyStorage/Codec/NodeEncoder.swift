import CanopyCore

/// Encodes nodes with one key table shared by everything encoded through the same instance
/// (one checkpoint payload, or one write operation).
struct NodeEncoder {
    var interner = KeyInterner()

    mutating func encode(_ node: Node, into w: inout ByteWriter) {
        switch node {
        case .empty:
            w.append(NodeTag.empty)
        case .leaf(let value):
            Self.encodeLeaf(value, into: &w)
        case .prioritizedLeaf(let p):
            w.append(NodeTag.prioritizedLeaf)
            Self.encodeLeaf(p.value, into: &w)
            Self.encodeLeaf(p.priority, into: &w)
        case .children(let c):
            let count = c.map.count
            if let priority = c.priority {
                w.append(NodeTag.prioritizedChildren)
                Self.encodeLeaf(priority, into: &w)
                w.appendVarint(count)
            } else if count <= NodeTag.inlineLimit {
                w.append(NodeTag.smallChildren | UInt8(truncatingIfNeeded: count &- 1))
            } else {
                w.append(NodeTag.children)
                w.appendVarint(count)
            }
            self.encodeChildren(of: node, count: count, into: &w)
        }
    }

    private mutating func encodeChildren(of node: Node, count: Int, into w: inout ByteWriter) {
        let candidates = count <= KeyInterner.maxCandidateNodeSize
        var previous = ""
        // `SortedMap`'s inlinable `package` members are not specialized across modules (Swift 6.3):
        // `Node.forEachChild`, compiled in CanopyCore, iterates without generic dispatch.
        node.forEachChild { key, child in
            self.encodeChild(key, child, candidate: candidates, previous: &previous, into: &w)
            return true
        }
    }

    @inline(__always)
    private mutating func encodeChild(
        _ key: ChildKey, _ child: Node, candidate candidates: Bool, previous: inout String, into w: inout ByteWriter
    ) {
        let string = key.string
        var mode = KeyReference.literal
        if candidates {
            switch self.interner.decide(string) {
            case .reference(let index):
                w.appendVarint(UInt64(index) &<< 2)
                previous = string
                self.encode(child, into: &w)
                return
            case .literal: break
            case .internedLiteral: mode = KeyReference.internedLiteral
            }
        }
        Self.encodeLiteralKey(string, previous: previous, mode: mode, into: &w)
        previous = string
        self.encode(child, into: &w)
    }

    /// `prefix << 2 | mode`, the suffix length, the suffix bytes.
    private static func encodeLiteralKey(_ key: String, previous: String, mode: UInt64, into w: inout ByteWriter) {
        var key = key
        var previous = previous
        key.withUTF8 { k in
            let p = previous.withUTF8 { commonPrefixLength(k, $0) }
            w.appendVarint(UInt64(p) &<< 2 | mode)
            w.appendVarint(k.count &- p)
            w.append(contentsOf: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(k)[p...]))
        }
    }

    @inline(__always)
    private static func commonPrefixLength(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = Swift.min(a.count, b.count)
        var i = 0
        while i < n && a[i] == b[i] { i &+= 1 }
        return i
    }

    static func encodeLeaf(_ value: LeafValue, into w: inout ByteWriter) {
        switch value {
        case .bool(let b):
            w.append(b ? NodeTag.trueValue : NodeTag.falseValue)
        case .int(let i):
            if i >= 0 && i < Int64(NodeTag.inlineLimit) {
                w.append(NodeTag.smallInt | UInt8(truncatingIfNeeded: i))
            } else {
                w.append(NodeTag.int)
                w.appendZigzag(i)
            }
        case .double(let d):
            w.append(NodeTag.double)
            w.appendU64(d.bitPattern)
        case .string(let s):
            let n = s.utf8.count
            if n < NodeTag.inlineLimit {
                w.append(NodeTag.shortString | UInt8(truncatingIfNeeded: n))
            } else {
                w.append(NodeTag.string)
                w.appendVarint(n)
            }
            w.appendUTF8(s)
        }
    }
}
