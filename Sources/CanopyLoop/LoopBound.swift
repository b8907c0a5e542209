/// A value that may be used only on its loop's thread, carried through `@Sendable` closures.
///
/// Wrap loop-confined, non-`Sendable` state (the database tree, observer tables) in it and
/// capture it in jobs: every access checks ``EventLoop/preconditionInLoop(_:file:line:)``.
///
/// ```swift
/// let count = LoopBound(0, loop: loop)
/// loop.execute { count.value += 1 }   // runs on the loop thread
/// ```
// @unchecked Sendable: `box` is only read or written on `loop`'s thread, checked at every access.
package struct LoopBound<Value>: @unchecked Sendable {
    /// The loop whose thread may use the value.
    package let loop: EventLoop
    private let box: Box

    /// Wraps `value`. Any thread may create it: `sending` guarantees no other reference to it is
    /// left behind.
    package init(_ value: sending Value, loop: EventLoop) {
        self.loop = loop
        self.box = Box(value)
    }

    /// The value. Loop thread only (checked).
    package var value: Value {
        get {
            self.loop.preconditionInLoop()
            return self.box.value
        }
        nonmutating set {
            self.loop.preconditionInLoop()
            self.box.value = newValue
        }
    }

    /// Mutates the value in place (no copy of an array or dictionary). Loop thread only (checked).
    package func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        self.loop.preconditionInLoop()
        return try body(&self.box.value)
    }

    private final class Box {
        var value: Value

        init(_ value: Value) {
            self.value = value
        }
    }
}
