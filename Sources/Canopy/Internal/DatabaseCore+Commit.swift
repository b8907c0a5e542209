import CanopyCore
import CanopyLoop
import Synchronization

extension DatabaseCore {
    /// Applies `writes`, made one after another, as one write: one journal record, one round of
    /// events, the outcome of applying them in order (see ``WriteComposer``). Loop thread only.
    ///
    /// - Complexity: O(*e* · *d*) to compose *e* entries at depth *d* (more where they overlap), then as
    ///   applying one multi-path update.
    func commit(_ writes: [WriteOperation], completion: @escaping @Sendable (DatabaseError?) -> Void) {
        self.loop.assertOnLoop()
        guard writes.count > 1 else {
            if let write = writes.first { self.apply(write, completion: completion) } else { completion(nil) }
            return
        }
        if let write = WriteComposer.disjoint(writes) {
            self.apply(write, completion: completion)
            return
        }
        self.backend.commitOverlapping(writes, completion: completion)
    }

    /// `writes`, made one after another, as one write (`nil`: nothing to write), composed against
    /// the tree now where they overlap. Loop thread only.
    package func composed(_ writes: [WriteOperation], now: Int64? = nil) -> WriteOperation? {
        if writes.count <= 1 { return writes.first }
        if let write = WriteComposer.disjoint(writes) { return write }
        let now = now ?? self.clock()
        var composer = WriteComposer()
        let engine = self.engine
        for write in writes { composer.add(write, now: now) { engine.root.node(at: $0) } }
        return composer.operation()
    }
}
