/// The differences between the children of two versions of a node, by key: children that were
/// removed, added, or whose data changed (a change of position alone is a change of data: the
/// sort value is part of it). The view turns them into child events (see the Events article).
package struct ChildChanges {
    package var removed: [(key: ChildKey, node: Node)] = []
    package var added: [(key: ChildKey, node: Node)] = []
    package var changed: [(key: ChildKey, old: Node, new: Node)] = []

    package var isEmpty: Bool { self.removed.isEmpty && self.added.isEmpty && self.changed.isEmpty }

    /// No changes.
    package init() {}

    /// Puts every list in key order.
    package mutating func sortByKey() {
        self.removed.sort { ChildKey.compare($0.key, $1.key) < 0 }
        self.added.sort { ChildKey.compare($0.key, $1.key) < 0 }
        self.changed.sort { ChildKey.compare($0.key, $1.key) < 0 }
    }

    /// Compares the children of `old` and `new`. When `candidates` is given, only those keys can
    /// have changed (a write below the location), so only they are looked at: O(k log *n*).
    /// Otherwise the two children maps are merged in key order: O(*n* + *m*).
    /// Every list comes out in key order.
    package init(old: Node, new: Node, candidates: [ChildKey]?) {
        let oldMap = old.childMap
        let newMap = new.childMap
        if oldMap.isIdentical(to: newMap) { return }
        if let candidates {
            for key in candidates {
                self.classify(key, oldMap[key], newMap[key])
            }
            return
        }
        var oi = oldMap.makeIterator()
        var ni = newMap.makeIterator()
        var o = oi.next()
        var n = ni.next()
        while o != nil || n != nil {
            if let oe = o, let ne = n {
                let c = ChildKey.compare(oe.key, ne.key)
                if c == 0 {
                    if oe.value != ne.value { self.changed.append((oe.key, oe.value, ne.value)) }
                    o = oi.next()
                    n = ni.next()
                } else if c < 0 {
                    self.removed.append((oe.key, oe.value))
                    o = oi.next()
                } else {
                    self.added.append((ne.key, ne.value))
                    n = ni.next()
                }
            } else if let oe = o {
                self.removed.append((oe.key, oe.value))
                o = oi.next()
            } else if let ne = n {
                self.added.append((ne.key, ne.value))
                n = ni.next()
            }
        }
    }

    private mutating func classify(_ key: ChildKey, _ old: Node?, _ new: Node?) {
        switch (old, new) {
        case (let o?, let n?): if o != n { self.changed.append((key, o, n)) }
        case (let o?, nil): self.removed.append((key, o))
        case (nil, let n?): self.added.append((key, n))
        case (nil, nil): break
        }
    }
}
