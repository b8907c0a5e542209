import CanopyCore
import CanopyLoop
import Synchronization

extension DatabaseCore {
    /// Registers an aggregate observer; its first value follows on the loop.
    func observeAggregate(_ box: AggregateObserverBox) {
        self.aggregateObservers.withLock { $0[box.handle] = box }
        let accepted = self.perform { [self] in
            guard box.isActive else { return }
            guard let request = box.query.request, box.query.error == nil else {
                self.endAggregate(box, error: box.query.error!)
                return
            }
            let query = box.query.query
            let listener = AggregateListener(path: query.path, params: query.params, request: request) { [unowned self] value in
                self.deliverAggregate(value, to: box)
            }
            box.listener = listener
            self.deliverAggregate(self.engine.listen(listener), to: box)
        }
        if !accepted {
            self.aggregateObservers.withLock { _ = $0.removeValue(forKey: box.handle) }
            LoopCallback(box.cancel).value?(Self.closedError)
        }
    }

    /// Removes aggregate observer `handle`; it gets nothing more once this returns.
    func removeAggregateObserver(_ handle: DatabaseHandle) {
        guard let box = self.aggregateObservers.withLock({ $0.removeValue(forKey: handle) }) else { return }
        box.deactivate()
        self.awaitDeliveries(to: [handle])
        self.perform { [self] in
            if let listener = box.listener { self.engine.unlisten(listener) }
            box.listener = nil
        }
    }

    /// Ends an aggregate observer for a reason other than removal, calling its cancel block (loop).
    func endAggregate(_ box: AggregateObserverBox, error: DatabaseError) {
        self.loop.assertOnLoop()
        self.aggregateObservers.withLock { _ = $0.removeValue(forKey: box.handle) }
        box.deactivate()
        if let listener = box.listener { self.engine.unlisten(listener) }
        box.listener = nil
        box.cancel?(error)
    }

    /// Cancels every aggregate observer (loop thread): the database is closing.
    func endAggregates(error: DatabaseError) {
        let boxes = self.aggregateObservers.withLock { Array($0.values) }
        for box in boxes.sorted(by: { $0.handle < $1.handle }) where box.isActive { self.endAggregate(box, error: error) }
    }

    /// Calls the engine's aggregate listeners with the values the last write changed (loop).
    func deliverAggregateChanges() {
        guard self.engine.hasAggregateChanges else { return }
        var changes: [AggregateChange] = []
        swap(&changes, &self.spareAggregateChanges)
        self.engine.takeAggregateChanges(into: &changes)
        // By index: each change is read in place, not copied.
        for i in changes.indices where self.engine.isListening(changes[i].listener) {
            changes[i].deliver()
        }
        changes.removeAll(keepingCapacity: true)
        self.spareAggregateChanges = changes
    }

    /// Calls one observer's block (loop), unless it was removed meanwhile.
    private func deliverAggregate(_ value: AggregateResult, to box: AggregateObserverBox) {
        self.loop.assertOnLoop()
        let outer = self.delivering.load(ordering: .relaxed)
        defer { self.delivering.store(outer, ordering: .releasing) }
        // As in `deliver(_:)`: announce the call, then check that the observer is still there.
        self.delivering.store(box.handle, ordering: .relaxed)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard box.isActive else { return }
        box.block(AggregateSnapshot(box.query, result: value))
    }
}
