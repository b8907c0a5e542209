extension Node: Equatable {
    /// Deep equality: numbers by value, priorities included, shared storage short-circuits.
    package static func == (lhs: Node, rhs: Node) -> Bool {
        switch (lhs, rhs) {
        case (.empty, .empty): return true
        case (.leaf(let a), .leaf(let b)): return a == b
        case (.prioritizedLeaf(let a), .prioritizedLeaf(let b)):
            return a === b || (a.value == b.value && a.priority == b.priority)
        case (.children(let a), .children(let b)):
            if a.priority != b.priority { return false }
            if a.map.isIdentical(to: b.map) { return true }
            guard a.map.count == b.map.count else { return false }
            var ia = a.map.makeIterator()
            var ib = b.map.makeIterator()
            while let x = ia.next(), let y = ib.next() {
                if x.key != y.key || x.value != y.value { return false }
            }
            return true
        default: return false
        }
    }
}
