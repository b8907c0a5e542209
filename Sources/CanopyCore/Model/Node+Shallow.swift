extension Node {
    /// What a shallow read gives (REST `shallow=true`): an object's children each `true`, its
    /// priority dropped; a leaf or empty node as it is. Compiled here, for this map type, so a
    /// read from another module walks the keys without generic dispatch.
    ///
    /// - Complexity: O(*n*) for *n* children.
    package var shallow: Node {
        guard case .children(let c) = self else { return self }
        var keys = ContiguousArray<ChildKey>()
        keys.reserveCapacity(c.map.count)
        _ = c.map.forEachElement { key, _ in
            keys.append(key)
            return true
        }
        let values = ContiguousArray(repeating: Node.leaf(.bool(true)), count: keys.count)
        return .children(ChildrenNode(map: SortedMap(sortedKeys: keys, values: values), prioritizedChildren: 0))
    }
}
