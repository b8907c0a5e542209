import Foundation
import NIOCore
import NIOPosix

/// Connects one client per handler (the `n`-th to `port(n)`) on `group`, a few hundred
/// connections in flight at a time (the listen backlog is finite), then waits up to `seconds`
/// until `ready` holds for every handler.
func connectAll<Handler: ChannelInboundHandler & Sendable>(
    _ handlers: [Handler], group: any EventLoopGroup, port: (Int) -> Int, within seconds: UInt64, what: String, ready: (Handler) -> Bool
) throws {
    let ports = handlers.indices.map(port)
    _ = try blocking {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for (n, handler) in handlers.enumerated() {
                let port = ports[n]
                tasks.addTask {
                    _ = try await ClientBootstrap(group: group)
                        .channelOption(.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler) }
                        }
                        .connect(host: "127.0.0.1", port: port).get()
                }
                if n % 200 == 199 { try await tasks.waitForAll() }
            }
            try await tasks.waitForAll()
        }
        return 0
    }
    let deadline = monotonicNanos() + seconds * 1_000_000_000
    while handlers.contains(where: { !ready($0) }) && monotonicNanos() < deadline { usleep(10_000) }
    guard !handlers.contains(where: { !ready($0) }) else { throw BenchError("\(what) did not all start") }
}
