package import CanopyLoop
import CanopyStorage

/// The database's event loop as its durable store sees it.
package struct StoreLoopAdapter: StoreLoop {
    let loop: EventLoop

    package init(loop: EventLoop) {
        self.loop = loop
    }

    package func execute(_ job: @escaping @Sendable () -> Void) -> Bool { self.loop.execute(job) }

    package func executeUnbounded(_ job: @escaping @Sendable () -> Void) -> Bool { self.loop.executeUnbounded(job) }

    package func runInThreadPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value, then completion: @escaping (Value) -> Void) {
        self.loop.runInThreadPool(work, then: completion)
    }

    package var isLoopConfinementSatisfied: Bool { self.loop.isLoopConfinementSatisfied }
}
