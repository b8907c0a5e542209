import CanopyLoop
import CanopyStorage

/// The database's event loop as its durable store sees it.
struct StoreLoopAdapter: StoreLoop {
    let loop: EventLoop

    func execute(_ job: @escaping @Sendable () -> Void) -> Bool { self.loop.execute(job) }

    func executeUnbounded(_ job: @escaping @Sendable () -> Void) -> Bool { self.loop.executeUnbounded(job) }

    func runInThreadPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value, then completion: @escaping (Value) -> Void) {
        self.loop.runInThreadPool(work, then: completion)
    }

    var isLoopConfinementSatisfied: Bool { self.loop.isLoopConfinementSatisfied }
}
