import CanopyCore
import CanopyTestSupport
import Testing

/// ``QueryWindow/update(changed:location:order:)`` against a window recounted from scratch, for
/// writes that change several children at once (the incremental path the library's model tests,
/// with their small lists, rarely reach).
struct QueryWindowUpdateTests {
    static let queries: [(name: String, params: QueryParams)] = [
        ("limitToFirst(25)", QueryParams(index: .value, limit: .first(25))),
        ("limitToLast(30)", QueryParams(index: .value, limit: .last(30))),
        (
            "startAt(100).limitToFirst(12)",
            QueryParams(index: .value, start: QueryBound(value: .int(100), key: .min, inclusive: true), limit: .first(12))
        ),
        (
            "endAt(300).limitToLast(9)",
            QueryParams(index: .value, end: QueryBound(value: .int(300), key: .max, inclusive: true), limit: .last(9))
        ),
        (
            "startAt(50).endAt(150)",
            QueryParams(
                index: .value, start: QueryBound(value: .int(50), key: .min, inclusive: true),
                end: QueryBound(value: .int(150), key: .max, inclusive: true))
        ),
        ("key order, limitToLast(8)", QueryParams(index: .key, limit: .last(8))),
    ]

    @Test("a write of several children updates the window as a recount would, with the same changes", arguments: 0..<6)
    func multiChildWrites(query: Int) throws {
        let params = Self.queries[query].params
        var random = SeededGenerator(seed: UInt64(query) &+ 7)
        var location = Node.empty
        for i in 0..<200 { location.setChild(ChildKey("k\(i)"), to: .leaf(.int(Int64(random.int(400))))) }
        let index = ChildIndex(index: params.index, node: location)
        func order(_ node: Node) -> ChildOrder { params.index == .key ? .keys(node.childMap) : .index(index.entries) }
        var window = QueryWindow(params: params, order: order(location))
        for step in 0..<400 {
            // 2 to 6 children: set, changed or removed (keys beyond the initial 200 are new).
            var keys: [ChildKey] = []
            var next = location
            for _ in 0..<(2 + random.int(5)) {
                let key = ChildKey("k\(random.int(230))")
                if keys.contains(key) { continue }
                keys.append(key)
                next.setChild(key, to: random.int(5) == 0 ? .empty : .leaf(.int(Int64(random.int(400)))))
            }
            for key in keys { index.update(key: key, old: location.child(key), new: next.child(key)) }
            let before = window.node
            let changes = window.update(changed: keys, location: next, order: order(next))
            let recounted = QueryWindow(params: params, order: order(next))
            #expect(window.node == recounted.node, "step \(step): window")
            #expect(Array(window.entries.map(\.key)) == Array(recounted.entries.map(\.key)), "step \(step): order")
            let expected = ChildChanges(old: before, new: recounted.node, candidates: nil)
            #expect(changes.added.map(\.key) == expected.added.map(\.key), "step \(step): added")
            #expect(changes.removed.map(\.key) == expected.removed.map(\.key), "step \(step): removed")
            #expect(changes.changed.map(\.key) == expected.changed.map(\.key), "step \(step): changed")
            if window.node != recounted.node { return }
            location = next
        }
    }
}
