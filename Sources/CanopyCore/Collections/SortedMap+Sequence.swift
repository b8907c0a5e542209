extension SortedMap: Sequence {
    package typealias Element = (key: Key, value: Value)

    /// Iterates in key order, from `rank` on (or backwards from `rank`, inclusive, when `reversed`).
    package struct Iterator: IteratorProtocol {
        @usableFromInline var stack: [(node: SortedMapNode<Key, Value>, index: Int)] = []
        @usableFromInline let reversed: Bool

        // Inlinable (with `advance`), so that iteration from other modules is specialized: no
        // generic tuple metadata on every step.
        @inlinable
        init(root: SortedMapNode<Key, Value>?, startRank: Int, reversed: Bool) {
            self.reversed = reversed
            guard var node = root, startRank >= 0, startRank < node.count else { return }
            var r = startRank
            while !node.isLeaf {
                let child = node.child(atRank: r)
                r = child.rank
                self.stack.append((node, child.index))
                node = node.children[child.index]
            }
            self.stack.append((node, r))
        }

        @inlinable
        package mutating func next() -> Element? {
            guard let top = self.stack.last else { return nil }
            let element = (top.node.keys[top.index], top.node.values[top.index])
            self.advance()
            return element
        }

        @inlinable
        mutating func advance() {
            let step = self.reversed ? -1 : 1
            while let top = self.stack.popLast() {
                let next = top.index + step
                let width = top.node.isLeaf ? top.node.keys.count : top.node.children.count
                guard next >= 0 && next < width else { continue }
                self.stack.append((top.node, next))
                var node = top.node
                var index = next
                while !node.isLeaf {
                    node = node.children[index]
                    index = self.reversed ? node.width - 1 : 0
                    self.stack.append((node, index))
                }
                return
            }
        }
    }

    @inlinable
    package func makeIterator() -> Iterator { Iterator(root: self.root, startRank: 0, reversed: false) }

    /// Elements in key order starting at `rank`.
    package func elements(fromRank rank: Int) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: self.root, startRank: rank, reversed: false))
    }

    /// Elements in reverse key order starting at `rank` (inclusive) and going down.
    package func reversedElements(fromRank rank: Int) -> IteratorSequence<Iterator> {
        IteratorSequence(Iterator(root: self.root, startRank: rank, reversed: true))
    }

    /// All elements in reverse key order.
    package func reversedElements() -> IteratorSequence<Iterator> { self.reversedElements(fromRank: self.count - 1) }

    @inlinable package var underestimatedCount: Int { self.count }

    /// The keys in order.
    package var keys: [Key] { self.map(\.key) }
}
