import CanopyCore
import CanopyLoop

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
        let now = self.clock()
        var composer = WriteComposer()
        let engine = self.engine
        for write in writes { composer.add(write, now: now) { engine.root.node(at: $0) } }
        guard let write = composer.operation() else {
            completion(nil)
            return
        }
        self.apply(write, now: now, completion: completion)
    }
}
