import Canopy
import CanopyCore
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// Server-sent event streams.
extension CanopyResponder {
    /// The most bytes of a stream written at once.
    static let sliceBytes = 128 << 10

    /// A server-sent event stream of the location (or of a filtered query's window): the initial
    /// `put`, then one event per write that changes what it shows (see ``SubscriptionHub``).
    ///
    /// A stream the rules do not allow is refused (401) before it starts; one that new rules no
    /// longer allow gets `cancel` and ends; one opened with a user token gets `auth_revoked` and
    /// ends when the token expires.
    func stream(path: DatabasePath, options: ReadOptions, namespace: Namespace, identity: Identity, context: Context)
        async throws(RESTError)
        -> Response
    {
        if options.shallow || options.export {
            throw .badRequest("shallow and format=export are not supported on streams.")
        }
        let channel = context.channel
        let metrics = self.state.metrics
        let configuration = self.state.configuration
        let stream = EventStream(
            location: path, query: options.hasFilters ? options.query : nil, aggregate: options.aggregate,
            limit: configuration.streamBufferBytes,
            identity: identity, scheduler: self.state.wakes
        ) {
            // A client that stops reading: cut off.
            metrics.countSlowClient(.sse)
            channel?.close(promise: nil)
        }
        let state = self.state
        let database = namespace.database
        let hub = namespace.hub
        let cleanup: @Sendable () -> Void = {
            state.unregister(stream)
            database.onLoop { access in hub.unsubscribe(stream, from: stream.subscription, access: access) }
        }
        let added: SubscriptionHub.Start?
        do {
            added = try await database.loop { access in
                // Judged and added in one step: rules replaced after it see the stream.
                guard namespace.mayRead(path, query: stream.query, identity: identity, access: access) else { return nil }
                return hub.subscribe(stream, to: stream.subscription, limit: configuration.maxResponseBytes, access: access)
            }
        } catch {
            cleanup()
            throw error
        }
        switch added {
        case nil:
            cleanup()
            throw RESTError.permissionDenied
        case .closed:
            cleanup()
            throw RESTError(.serviceUnavailable, "The database was closed.")
        case .tooLarge:
            cleanup()
            throw RESTError.badRequest(ResponseLimit.exceeded(configuration.maxResponseBytes))
        case .added:
            break
        }
        // Registered for keep-alives only now, after its initial `put` is queued: a keep-alive
        // never comes first.
        guard self.state.register(stream) else {
            cleanup()
            throw RESTError(.serviceUnavailable, "The server is shutting down.")
        }
        metrics.countStreamOpened()
        // A user token ends the stream when it expires (`auth_revoked`); the client reconnects with
        // a fresh one.
        let expiry: Task<Void, Never>? =
            if case .user(_, let expires?) = identity {
                Task(executorPreference: self.state.taskExecutor.withLock { $0 }) {
                    let remaining = expires - Int64(Date().timeIntervalSince1970 * 1000)
                    try? await Task.sleep(for: .milliseconds(max(0, remaining)))
                    if !Task.isCancelled { stream.finish(trailer: EventRender.authRevoked) }
                }
            } else {
                nil
            }
        channel?.closeFuture.whenComplete { _ in
            expiry?.cancel()
            stream.drop()
            cleanup()
        }
        if let channel { StreamHangup.install(on: channel) }
        // A client that takes nothing for a while: cut off, whatever the size of what waits.
        let watch = channel.map { channel in
            StallWatch(timeout: TimeAmount(configuration.slowClientTimeout), eventLoop: channel.eventLoop) {
                stream.drop()
                metrics.countSlowClient(.sse)
                channel.close(promise: nil)
            }
        }
        let headers: HTTPFields = [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-cache"]
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                defer {
                    watch?.stop()
                    cleanup()
                }
                while let batch = await stream.next() {
                    // In slices, each written once the connection took the one before (the writer
                    // waits for its writability): progress is judged per slice.
                    if let snapshot = batch.snapshot?.bytes {
                        var start = 0
                        while start < snapshot.count {
                            let end = min(start + Self.sliceBytes, snapshot.count)
                            watch?.queued()
                            try await writer.write(ByteBuffer(bytes: snapshot[start..<end]))
                            watch?.progressed(drained: false)
                            start = end
                        }
                    }
                    if var bytes = batch.bytes {
                        while let slice = bytes.readSlice(length: min(Self.sliceBytes, bytes.readableBytes)), slice.readableBytes > 0 {
                            watch?.queued()
                            try await writer.write(slice)
                            watch?.progressed(drained: false)
                        }
                    }
                    if let trailer = batch.trailer { try await writer.write(trailer) }
                    watch?.progressed(drained: true)
                }
                try await writer.finish(nil)
            })
    }
}
