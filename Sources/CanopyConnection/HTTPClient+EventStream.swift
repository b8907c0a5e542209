import NIOCore
import NIOHTTP1
import NIOPosix

extension HTTPClient {
    private typealias StreamChannel = NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>

    /// Opens an event stream (`GET target` with `Accept: text/event-stream`) on a connection of
    /// its own, and calls `event` with each event's name and data while the status is 200.
    /// Returns the response when the server ends the stream: its status and `Location`, and its
    /// body when the status is not 200. An error `event` throws ends the stream and is rethrown;
    /// a connection that fails throws ``Failure``.
    package func stream(
        host: String, port: Int, _ target: String, headers: [(String, String)] = [],
        event: @Sendable (String, [UInt8]) throws -> Void
    ) async throws -> Response {
        let channel: StreamChannel
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(self.connectTimeout)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try StreamChannel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw Failure(sent: false, reason: Self.describe(error))
        }
        let head = self.head(
            .GET, Self.authority(host, port), target, headers: [("Accept", "text/event-stream")] + headers, bodyLength: nil)
        do {
            return try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(contentsOf: [.head(head), .end(nil)])
                var parser = EventStreamParser()
                var response = Response(status: 0)
                for try await part in inbound {
                    switch part {
                    case .head(let head):
                        response.status = Int(head.status.code)
                        response.location = head.headers.first(name: "Location")
                    case .body(let buffer):
                        guard response.status == 200 else {
                            response.body += buffer.readableBytesView
                            continue
                        }
                        for (name, data) in parser.feed(buffer.readableBytesView) {
                            do { try event(name, data) } catch { throw StreamEventError(underlying: error) }
                        }
                    case .end:
                        return response
                    }
                }
                guard response.status != 0 else { throw Failure(sent: true, reason: "the server closed the connection without answering") }
                return response
            }
        } catch let error as StreamEventError {
            throw error.underlying
        } catch let error as Failure {
            throw error
        } catch {
            throw Failure(sent: true, reason: Self.describe(error))
        }
    }
}

/// An error thrown by a stream's event handler, on its way out unchanged.
private struct StreamEventError: Error {
    var underlying: any Error
}
