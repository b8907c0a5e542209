import CanopyCore
import Testing

/// `SyncEngine.takeReplaced()`: the node a write replaced, kept by the write's own descent for an
/// index of its parent, is handed to the caller once (to be released on the thread that wrote it).
@Suite("The node a write replaced")
struct ReplacedNodeTests {
    private static func path(_ string: String) throws -> DatabasePath {
        try DatabasePath(validating: string, function: "test")
    }

    private static func set(_ engine: SyncEngine, _ path: String, _ node: Node) throws {
        _ = try engine.apply(.set(try Self.path(path), WriteValue(node: node)), now: 0)
    }

    private static func item(_ score: Int64) -> Node {
        Node.empty.setting(.leaf(.int(score)), at: [ChildKey("score")][...])
    }

    @Test("with a live aggregate on the parent, the old child is handed over once, then nothing")
    func handedOverOnce() throws {
        let engine = SyncEngine()
        try Self.set(engine, "items/a", Self.item(1))
        try Self.set(engine, "items/b", Self.item(2))
        let request = try AggregateRequest([.count, try .of(.sum, "score")])
        let listener = AggregateListener(
            path: try Self.path("items"), params: QueryParams(index: .child([ChildKey("score")])), request: request, onChange: { _ in })
        _ = engine.listen(listener)
        #expect(engine.takeReplaced().isEmpty)

        try Self.set(engine, "items/a", Self.item(10))
        #expect(engine.takeReplaced() == Self.item(1))
        #expect(engine.takeReplaced().isEmpty)
        // A new child replaces nothing; a removal replaces the child.
        try Self.set(engine, "items/c", Self.item(3))
        #expect(engine.takeReplaced().isEmpty)
        try Self.set(engine, "items/b", .empty)
        #expect(engine.takeReplaced() == Self.item(2))
        #expect(engine.node(at: try Self.path("items")).childCount == 2)
    }

    @Test("without an index on the parent nothing is kept")
    func nothingWithoutIndex() throws {
        let engine = SyncEngine()
        try Self.set(engine, "items/a", Self.item(1))
        try Self.set(engine, "items/a", Self.item(2))
        #expect(engine.takeReplaced().isEmpty)
        #expect(engine.node(at: try Self.path("items/a")) == Self.item(2))
    }
}
