import CanopyCore

extension DurableStore {
    /// Writes and syncs everything, completes the pending writes and stops the journal thread
    /// (loop thread, or any thread once the loop has stopped). The lock is released by
    /// ``releaseLock()`` once the loop (and any checkpoint) has finished.
    package func close() {
        self.loop.assertOnLoop()
        guard !self.closed else { return }
        self.flush()
        self.closed = true
        self.writer.close()
        self.completeThrough(self.channel.acknowledged)
        let error = self.broken ?? DatabaseError(.ioError, "The journal could not write this before closing.")
        let left = self.pending[self.pendingHead...]
        self.pending.removeAll()
        self.pendingHead = 0
        for entry in left { entry.completion?(error) }
        let waiters = self.checkpointWaiters
        self.checkpointWaiters = []
        for waiter in waiters { waiter(.databaseClosed) }
    }

    package func releaseLock() {
        self.lock?.release()
    }
}
