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
        if self.remote != nil {
            // Composing overlapping writes needs the data under them, which a cache may not hold:
            // against a server they go as consecutive writes, in order; the completion reports the
            // first failure once all are answered.
            let remaining = Mutex((count: writes.count, error: DatabaseError?.none))
            for write in writes {
                self.apply(write) { error in
                    let done: (Bool, DatabaseError?) = remaining.withLock { state in
                        state.count -= 1
                        if state.error == nil { state.error = error }
                        return (state.count == 0, state.error)
                    }
                    if done.0 { completion(done.1) }
                }
            }
            return
        }
        let now = self.clock()
        guard let write = self.composed(writes, now: now) else {
            completion(nil)
            return
        }
        self.apply(write, now: now, completion: completion)
    }

    /// `writes`, made one after another, as one write (`nil`: nothing to write), composed against
    /// the tree now where they overlap. Loop thread only.
    func composed(_ writes: [WriteOperation], now: Int64? = nil) -> WriteOperation? {
        if writes.count <= 1 { return writes.first }
        if let write = WriteComposer.disjoint(writes) { return write }
        let now = now ?? self.clock()
        var composer = WriteComposer()
        let engine = self.engine
        for write in writes { composer.add(write, now: now) { engine.root.node(at: $0) } }
        return composer.operation()
    }
}
