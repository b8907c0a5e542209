extension OutboxCore where Waiter == CheckedContinuation<Void, Never> {
    /// An outbox's `finish()`: runs `finish` (under the outbox's lock) with the caller as its
    /// waiter, and returns at once when it returns `true`, or else when the waiter is resumed.
    static func waitUntilFinished(_ finish: (Waiter) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if finish(continuation) { continuation.resume() }
        }
    }
}
