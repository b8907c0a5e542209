extension Array {
    /// Compacts a queue consumed from its front up to `head`: empties it once every element is
    /// consumed (keeping a small buffer), drops the consumed prefix once it is over 1,024 elements
    /// and half the array; `head` then restarts at 0.
    ///
    /// - Complexity: O(*n*) when it compacts, else O(1): amortized O(1) per element consumed.
    package mutating func compactConsumed(head: inout Int) {
        if head == self.count {
            self.removeAll(keepingCapacity: self.count < 4096)
            head = 0
        } else if head > 1024 && head * 2 > self.count {
            self.removeFirst(head)
            head = 0
        }
    }
}
