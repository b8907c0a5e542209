import ServiceLifecycle

/// Sends keep-alive events; on graceful shutdown ends every stream and closes every WebSocket
/// connection, so that the HTTP server, shut down after it, does not wait for them.
struct StreamService: Service {
    let state: ServerState
    let interval: Duration

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: self.interval)
                self.state.sendKeepAlive()
            }
        }
        self.state.closeStreams()
    }
}
