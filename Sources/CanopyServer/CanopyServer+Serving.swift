import Synchronization

extension CanopyServer {
    /// Runs the server (without signal handling) for the duration of `body`, which gets the port
    /// it listens on; then shuts it down and waits for it to finish. With `executor`, the server's
    /// tasks prefer it to Swift concurrency's default executor.
    ///
    /// - Throws: What `body` throws, or why the server did not start or stopped with an error.
    package func serving<T: Sendable>(
        on executor: (any TaskExecutor)? = nil, _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        self.state.taskExecutor.withLock { $0 = executor }
        let task = Task(executorPreference: executor) { try await self.run(handleSignals: false) }
        guard let port = await self.listeningPort() else {
            try await task.value
            throw ServerError("The server stopped before it listened.")
        }
        do {
            let value = try await body(port)
            await self.shutdown()
            try await task.value
            return value
        } catch {
            await self.shutdown()
            _ = try? await task.value
            throw error
        }
    }
}
