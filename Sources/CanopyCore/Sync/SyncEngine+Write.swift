extension SyncEngine {
    /// Applies a write and returns the events it raises, in delivery order: views below the
    /// written location (post-order, children in plain string order), then views at it, then
    /// views at its ancestors, nearest first (see the Events article).
    ///
    /// - Parameter now: The time server timestamps resolve to, in milliseconds since the epoch.
    /// - Throws: ``DatabaseError`` with `.writeFailed` for a priority on a missing node; nothing is
    ///   changed then.
    package func apply(_ write: WriteOperation, now: Int64) throws(DatabaseError) -> [Event] {
        if write.entries.isEmpty { return [] }
        let base = write.path
        if write.requiresExistingNode && self.node(at: base).isEmpty {
            throw DatabaseError(.writeFailed, "setPriority failed: there is no data at \(base.string) to set a priority on.")
        }
        // Without views or indexes there is nothing to update or notify: a plain set goes straight
        // to the tree.
        let hasViews = !self.viewRoot.isEmpty
        if !hasViews && write.entries.count == 1 && write.entries[0].value.placeholders.isEmpty
            && !(write.entries[0].path.last?.isPriorityKey ?? false)
        {
            // One set from the root: replacing or inserting the last key takes one search.
            let path = write.entries[0].path
            self.root.set(write.entries[0].value.node, at: path.isEmpty ? base.keys[...] : (base.keys + path)[...])
            return []
        }
        let indexUpdates = hasViews ? self.captureIndexedChildren(base: base, entries: write.entries) : []
        // Values first, then removals, then priorities: the outcome does not depend on the order
        // of the entries, and a node keeps its priority exactly when it is not empty afterwards.
        // Server values resolve against the data before the write (nothing is set until below).
        // The node at the written location before and after, for an index of its parent: the
        // write's own descent hands them over instead of two more searches.
        let keepsWritten = indexUpdates.contains { $0.isWritten }
        let written: (old: Node, new: Node)
        if write.entries.count < Self.bulkThreshold && !write.entries.contains(where: { !$0.value.placeholders.isEmpty }) {
            // Nothing to resolve: the entries are set as they are, read in place.
            var seen = (old: Node.empty, new: Node.empty)
            self.set(base: base) { node in
                if keepsWritten { seen.old = node }
                Self.setInOrder(write.entries, in: &node)
                if keepsWritten { seen.new = node }
            }
            written = seen
        } else {
            written = self.resolveAndSet(write, base: base, now: now, keepsWritten: keepsWritten)
        }
        for update in indexUpdates {
            update.apply(self, written: written)
            if !update.treeNode.aggregateListeners.isEmpty { self.refreshAggregates(of: update.treeNode) }
        }
        if keepsWritten { self.replaced = written.old }
        return self.viewCount > 0 ? self.raiseEvents(base: base, entryPaths: write.entries.map(\.path)) : []
    }

    /// Sets `entries` (none with a server value) below `node`: values, then removals, then priorities.
    private static func setInOrder(_ entries: [WriteOperation.Entry], in node: inout Node) {
        entries.withUnsafeBufferPointer { entries in
            // Removals and priorities are rare: their passes run only when there are some.
            var others = false
            for e in entries.indices {
                if entries[e].isPriority || entries[e].value.node.isEmpty {
                    others = true
                    continue
                }
                node.set(entries[e].value.node, at: entries[e].path[...])
            }
            guard others else { return }
            for e in entries.indices where !entries[e].isPriority && entries[e].value.node.isEmpty {
                node.set(.empty, at: entries[e].path[...])
            }
            for e in entries.indices where entries[e].isPriority { node.set(entries[e].value.node, at: entries[e].path[...]) }
        }
    }

    /// Resolves the server values of `write`'s entries against the tree now, then sets them (in
    /// the order of ``setInOrder(_:in:)``), in bulk when they are many; returns the node at the
    /// written location before and after when `keepsWritten` (else empty nodes).
    private func resolveAndSet(_ write: WriteOperation, base: DatabasePath, now: Int64, keepsWritten: Bool) -> (old: Node, new: Node) {
        var values: [(path: [ChildKey], node: Node)] = []
        var removals: [[ChildKey]] = []
        var priorities: [(path: [ChildKey], node: Node)] = []
        values.reserveCapacity(write.entries.count)
        for e in write.entries.indices {
            // Indexed, not iterated: the entry is read in place instead of copied whole.
            let path = write.entries[e].path
            let isPriority = path.last?.isPriorityKey ?? false
            var node = write.entries[e].value.node
            if !write.entries[e].value.placeholders.isEmpty {
                let target = self.root.node(at: base.keys + path.prefix { !$0.isPriorityKey })
                node = write.entries[e].value.resolved(forEntryAt: path, target: target, now: now)
            }
            if isPriority {
                priorities.append((path, node))
            } else if node.isEmpty {
                removals.append(path)
            } else {
                values.append((path, node))
            }
        }
        if values.count + removals.count >= Self.bulkThreshold {
            self.applyInBulk(base: base, values: &values, removals: &removals, others: priorities.map(\.path))
        }
        var written = (old: Node.empty, new: Node.empty)
        self.set(base: base) { node in
            if keepsWritten { written.old = node }
            for (path, value) in values { node.set(value, at: path[...]) }
            for path in removals { node.set(.empty, at: path[...]) }
            for (path, value) in priorities { node.set(value, at: path[...]) }
            if keepsWritten { written.new = node }
        }
        return written
    }

    /// Changes the tree at the written location with `body`: one descent for all of a write's
    /// entries. (A location ending in `.priority`, which no valid path has, is left to `Node.set`.)
    private func set(base: DatabasePath, _ body: (inout Node) -> Void) {
        guard base.keys.last?.isPriorityKey == true else {
            self.root.modify(at: base.keys[...], body)
            return
        }
        var node = self.root.node(at: base.keys)
        body(&node)
        self.root.set(node, at: base.keys[...])
    }

    /// What an index needs to follow a write: how the write changes the indexed location.
    struct IndexUpdate {
        enum Changes {
            /// Only the child at the written location (the index is its parent's): the old and
            /// new child are what the write's own descent saw there.
            case written(ChildKey)
            /// Only these children, as they were before.
            case children([(ChildKey, Node)])
            /// Wholly; the location as it was before.
            case whole(Node)
        }

        let location: ArraySlice<ChildKey>
        let treeNode: ViewTreeNode
        let changes: Changes

        var isWritten: Bool {
            if case .written = self.changes { return true }
            return false
        }

        /// Updates the location's indexes; `written` is the node at the written location before
        /// and after the write (what `.written` needs).
        func apply(_ engine: SyncEngine, written: (old: Node, new: Node)) {
            switch self.changes {
            case .written(let key):
                for index in self.treeNode.indexes.values { index.update(key: key, old: written.old, new: written.new) }
                for index in self.treeNode.aggregates.values { index.update(key: key, old: written.old, new: written.new) }
            case .children(let oldChildren):
                let newNode = engine.root.node(at: self.location)
                for (key, old) in oldChildren {
                    let new = newNode.child(key)
                    for index in self.treeNode.indexes.values { index.update(key: key, old: old, new: new) }
                    for index in self.treeNode.aggregates.values { index.update(key: key, old: old, new: new) }
                }
            case .whole(let oldNode):
                let newNode = engine.root.node(at: self.location)
                for index in self.treeNode.indexes.values { index.update(from: oldNode, to: newNode) }
                for index in self.treeNode.aggregates.values { index.update(from: oldNode, to: newNode) }
            }
        }
    }

    /// Before a write: remembers, for every index on the write's path or below it, the children the
    /// write can change, so the index can be updated afterwards in O(k log *n*).
    private func captureIndexedChildren(base: DatabasePath, entries: [WriteOperation.Entry]) -> [IndexUpdate] {
        var updates: [IndexUpdate] = []
        var treeNode: ViewTreeNode? = self.viewRoot
        for (depth, key) in base.keys.enumerated() {
            guard let node = treeNode else { return updates }
            if node.hasIndexes {
                let location = base.keys[..<depth]
                if depth == base.keys.count - 1 {
                    // The parent of the written location: the write hands over the old and new child.
                    updates.append(IndexUpdate(location: location, treeNode: node, changes: .written(key)))
                } else {
                    let child = self.root.node(at: base.keys[...depth])
                    updates.append(IndexUpdate(location: location, treeNode: node, changes: .children([(key, child)])))
                }
            }
            if node.children.isEmpty { return updates }
            treeNode = node.child(key)
        }
        guard let atBase = treeNode else { return updates }
        let entryPaths = entries.map(\.path)
        func visit(_ node: ViewTreeNode, relative: [ChildKey]) {
            let candidates = Self.candidates(for: relative, entryPaths: entryPaths)
            if candidates == .untouched { return }
            if node.hasIndexes {
                let location = (base.keys + relative)[...]
                switch candidates {
                case .untouched: break
                case .whole:
                    updates.append(IndexUpdate(location: location, treeNode: node, changes: .whole(self.root.node(at: location))))
                case .children(let keys):
                    let old = self.root.node(at: location)
                    updates.append(IndexUpdate(location: location, treeNode: node, changes: .children(keys.map { ($0, old.child($0)) })))
                }
            }
            for (key, child) in node.children { visit(child, relative: relative + [key]) }
        }
        visit(atBase, relative: [])
        return updates
    }

    private func raiseEvents(base: DatabasePath, entryPaths: [[ChildKey]]) -> [Event] {
        var events: [Event] = []
        // Walk down to the written location, remembering the ancestors that have views.
        var ancestors: [(node: ViewTreeNode, depth: Int)] = []
        var treeNode: ViewTreeNode? = self.viewRoot
        for (depth, key) in base.keys.enumerated() {
            guard let node = treeNode else { break }
            if !node.views.isEmpty { ancestors.append((node, depth)) }
            treeNode = node.child(key)
        }
        if let atBase = treeNode {
            self.visitBelow(atBase, relative: [], entryPaths: entryPaths, into: &events)
            self.updateViews(of: atBase, relative: [], entryPaths: entryPaths, into: &events)
        }
        for (node, depth) in ancestors.reversed() {
            self.update(node, candidates: [base.keys[depth]], into: &events)
        }
        return events
    }

    /// Post-order over the view tree below the written location, skipping subtrees no entry touches.
    private func visitBelow(_ treeNode: ViewTreeNode, relative: [ChildKey], entryPaths: [[ChildKey]], into events: inout [Event]) {
        for (key, child) in treeNode.childrenInStringOrder {
            let childRelative = relative + [key]
            guard Self.candidates(for: childRelative, entryPaths: entryPaths) != .untouched else { continue }
            self.visitBelow(child, relative: childRelative, entryPaths: entryPaths, into: &events)
            self.updateViews(of: child, relative: childRelative, entryPaths: entryPaths, into: &events)
        }
    }

    private func updateViews(of treeNode: ViewTreeNode, relative: [ChildKey], entryPaths: [[ChildKey]], into events: inout [Event]) {
        guard !treeNode.views.isEmpty else { return }
        switch Self.candidates(for: relative, entryPaths: entryPaths) {
        case .untouched: return
        case .whole: self.update(treeNode, candidates: nil, into: &events)
        case .children(let keys): self.update(treeNode, candidates: keys, into: &events)
        }
    }

    /// Updates every view of one location, creating a priority index first if the location's
    /// children now have priorities.
    private func update(_ treeNode: ViewTreeNode, candidates: [ChildKey]?, into events: inout [Event]) {
        guard let first = treeNode.views.first else { return }
        let location = self.node(at: first.path)
        for view in treeNode.views {
            if view.needsIndex(for: location) {
                view.childIndex = self.retainIndex(view.params.index, at: treeNode, node: location)
            }
            view.update(location: location, candidates: candidates, into: &events, changes: &self.viewChanges)
        }
    }

    enum Candidates: Equatable {
        case untouched
        case whole
        case children([ChildKey])
    }

    /// How the entries of a write (paths relative to it) can have changed the location at
    /// `relative` (also relative to it): not at all, wholly, or only in some direct children.
    static func candidates(for relative: [ChildKey], entryPaths: [[ChildKey]]) -> Candidates {
        var keys: [ChildKey] = []
        var seen = Set<ChildKey>()
        for entry in entryPaths {
            let isPriority = entry.last?.string == ".priority"
            let target = isPriority ? Array(entry.dropLast()) : entry
            if target.count <= relative.count {
                guard relative.starts(with: target) else { continue }
                // A value written at or above this location replaces it; a priority changes only
                // the node it names.
                if !isPriority || target.count == relative.count { return .whole }
            } else if target.starts(with: relative) {
                let key = target[relative.count]
                if seen.insert(key).inserted { keys.append(key) }
            }
        }
        return keys.isEmpty ? .untouched : .children(keys)
    }
}
