/// What a ``DurableStore`` needs of the database's event loop, the one thread its state is
/// confined to. The storage module does not depend on the loop module: the database adapts its
/// loop to this.
package protocol StoreLoop: Sendable {
    /// Queues `job` on the loop thread (from the loop thread it never blocks); `false` once the
    /// loop takes no more jobs.
    @discardableResult
    func execute(_ job: @escaping @Sendable () -> Void) -> Bool

    /// Like ``execute(_:)``, without backpressure: for the journal thread's notices, which must
    /// not wait for a loop that may be waiting for the journal.
    @discardableResult
    func executeUnbounded(_ job: @escaping @Sendable () -> Void) -> Bool

    /// Runs `work` on a pool thread, then `completion` with its result on the loop thread.
    /// Loop thread only.
    func runInThreadPool<Value: Sendable>(_ work: @escaping @Sendable () -> Value, then completion: @escaping (Value) -> Void)

    /// Whether loop-confined state may be touched from the calling thread: the loop thread, or
    /// any thread once the loop has finished.
    var isLoopConfinementSatisfied: Bool { get }
}

extension StoreLoop {
    /// Debug builds: stops the program unless called on the loop thread (or after the loop has
    /// finished). Compiled out in release builds.
    package func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(self.isLoopConfinementSatisfied, "must be called on the database loop thread", file: file, line: line)
    }
}
