/// A validated value ready to be written: the node, plus the server values inside it.
package struct WriteValue: Sendable, Equatable {
    /// One placeholder: where it sits (relative to the written location) and what it is.
    package struct Placeholder: Sendable, Equatable {
        package var path: [ChildKey]
        package var value: ServerValuePlaceholder
        /// Whether it is the priority of the node at `path` rather than its value.
        package var isPriority: Bool

        package init(path: [ChildKey], value: ServerValuePlaceholder, isPriority: Bool) {
            self.path = path
            self.value = value
            self.isPriority = isPriority
        }
    }

    package var node: Node
    package var placeholders: [Placeholder]

    package init(node: Node, placeholders: [Placeholder] = []) {
        self.node = node
        self.placeholders = placeholders
    }

    /// The node with every placeholder resolved against `current`, the data now at the location.
    package func resolved(against current: Node, now: Int64) -> Node {
        guard !self.placeholders.isEmpty else { return self.node }
        var node = self.node
        for p in self.placeholders {
            let here = current.node(at: p.path)
            if p.isPriority {
                let target = node.node(at: p.path)
                guard !target.isEmpty else { continue }
                let value = p.value.resolve(current: here.priority, now: now)
                node.set(target.withPriority(value), at: p.path[...])
            } else {
                let value = p.value.resolve(current: here.leafValue, now: now)
                let priority = node.node(at: p.path).priority
                node.set(Node.leaf(value).withPriority(priority), at: p.path[...])
            }
        }
        return node
    }
}
