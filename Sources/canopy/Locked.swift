import Synchronization

/// A value shared between threads behind a mutex (a class, so closures can capture it).
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { self.mutex = Mutex(value) }

    func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        self.mutex.withLock { body(&$0) }
    }
}
