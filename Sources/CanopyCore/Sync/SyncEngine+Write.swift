extension SyncEngine {
    /// Applies a write and returns the events it raises, in delivery order (spec §6.5): views
    /// below the written location (post-order, children in plain string order), then views at
    /// it, then views at its ancestors, nearest first.
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
        // Resolve server values against the data before the write, then apply the plain entries
        // and, last, the priorities.
        let resolved = write.entries.map { entry in
            (entry.path, entry.isPriority, entry.value.resolved(against: self.root.node(at: base.keys + entry.path.prefix { $0.string != ".priority" }), now: now))
        }
        for (path, isPriority, node) in resolved where !isPriority {
            self.root.set(node, at: (base.keys + path)[...])
        }
        for (path, isPriority, node) in resolved where isPriority {
            self.root.set(node, at: (base.keys + path)[...])
        }
        return self.raiseEvents(base: base, entryPaths: write.entries.map(\.path))
    }

    private func raiseEvents(base: DatabasePath, entryPaths: [[ChildKey]]) -> [Event] {
        var events: [Event] = []
        // Walk down to the written location, remembering the ancestors that have views.
        var ancestors: [(node: ViewTreeNode, depth: Int)] = []
        var treeNode: ViewTreeNode? = self.viewRoot
        for (depth, key) in base.keys.enumerated() {
            guard let node = treeNode else { break }
            if !node.views.isEmpty { ancestors.append((node, depth)) }
            treeNode = node.children[key]
        }
        if let atBase = treeNode {
            self.visitBelow(atBase, relative: [], entryPaths: entryPaths, into: &events)
            self.updateViews(of: atBase, relative: [], entryPaths: entryPaths, into: &events)
        }
        for (node, depth) in ancestors.reversed() {
            for view in node.views {
                view.update(to: self.node(at: view.path), candidates: [base.keys[depth]], into: &events)
            }
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
        let candidates: [ChildKey]?
        switch Self.candidates(for: relative, entryPaths: entryPaths) {
        case .untouched: return
        case .whole: candidates = nil
        case .children(let keys): candidates = keys
        }
        for view in treeNode.views {
            view.update(to: self.node(at: view.path), candidates: candidates, into: &events)
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
