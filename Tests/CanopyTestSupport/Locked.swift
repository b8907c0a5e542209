import Synchronization

/// A value shared between threads behind a `Mutex` (a class, so closures can capture it): the
/// callbacks running on a loop or helper thread write it, the test thread reads it.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { self.mutex = Mutex(value) }

    /// Runs `body` with the value locked.
    @discardableResult
    public func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        self.mutex.withLock { body(&$0) }
    }

    /// A copy of the value now.
    public var value: Value { self.mutex.withLock { $0 } }
}
