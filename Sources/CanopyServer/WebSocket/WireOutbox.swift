import CanopyWire
import NIOCore
import NIOWebSocket
import Synchronization

/// One WebSocket connection's outgoing messages, in order: the database loop (pushes), the
/// connection's event loop or request task (responses) and the journal thread (write
/// acknowledgements) queue them, and they are written on the connection's event loop, everything
/// queued since the last write going out with one flush.
///
/// Each message is queued as a whole WebSocket text frame, its header
/// (``NIOCore/ByteBuffer/writeWireTextFrameHeader(length:)``) and text copied into one buffer with
/// the messages queued before it, so a burst of answers is one buffer and one write, below NIO's
/// frame encoder (which would take a buffer, a boxed frame and a header buffer for each message).
/// A large push rendered once for many connections is not copied: its header goes in the buffer,
/// the shared text follows as a buffer of its own.
///
/// No task sits between the producer and the socket: a push costs one event-loop job at most,
/// and a busy connection's pushes share it (a writer task per connection would flush every
/// frame on its own).
///
/// Pushes are coalesced as a busy stream's events are: a push to a connection written less than
/// `coalescing` ago waits for the rest of that interval, so that under load a connection gets one
/// write (one system call) per interval, whatever the write rate; a quiet connection's push goes
/// at once. Answers to requests go at once, with the pushes queued before them.
///
/// Bounded: when more than `limit` bytes are queued or written but not yet taken by a client that
/// does not read, the queue is dropped and `overflow` closes the connection; other connections
/// are not affected.
final class WireOutbox: Sendable {
    private struct State {
        /// Whole frames, in order: nearly always one buffer of the outbox's own that messages are
        /// appended to; a large shared push adds its text as a buffer after it.
        var pending: [ByteBuffer] = []
        /// The last of `pending` is the outbox's own: the next message is appended to it.
        var appendable = false
        var pendingBytes = 0
        /// Written to the channel, not yet to the socket.
        var inFlightBytes = 0
        /// A write job is queued on the event loop.
        var scheduled = false
        /// A write job is scheduled for the end of the coalescing interval.
        var deferred = false
        /// When the last write job ran (nanoseconds, monotonic).
        var lastWrite: UInt64 = 0
        var channel: (any Channel)?
        /// No more messages are taken.
        var closed = false
        /// ``finish()`` callers, waiting for everything to be written.
        var drained: [CheckedContinuation<Void, Never>] = []

        var isIdle: Bool { self.pending.isEmpty && self.inFlightBytes == 0 && !self.scheduled }
    }

    private let state = Mutex(State())
    private let allocator = ByteBufferAllocator()
    private let limit: Int
    private let coalescing: UInt64
    private let overflow: @Sendable () -> Void

    /// - Parameter coalescing: nanoseconds; 0 writes every push at once.
    init(limit: Int, coalescing: UInt64 = 0, overflow: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.coalescing = coalescing
        self.overflow = overflow
    }

    /// Starts writing to `channel` (what was queued before goes first).
    func attach(_ channel: any Channel) {
        let schedule = self.state.withLock { state -> Bool in
            state.channel = channel
            guard !state.pending.isEmpty, !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { channel.eventLoop.execute { self.write(to: channel) } }
    }

    /// Queues one application message (its JSON text), split into frames when it is longer than
    /// 16,384 UTF-16 code units.
    /// `push`: a data push, which may wait for the coalescing interval; otherwise (an answer)
    /// it goes at once.
    func send(_ message: [UInt8], push: Bool = false) {
        // UTF-16 never needs more code units than UTF-8 needs bytes: a short message is one frame.
        if message.count <= WireFrameSplitter.frameLimit {
            self.enqueue(.message(message), push: push)
        } else {
            let frames = WireFrameSplitter.frames(String(decoding: message, as: UTF8.self))
            self.enqueue(.messages(frames.map { Array($0.utf8) }), push: push)
        }
    }

    /// Queues a push already rendered into one frame's text (shared by many connections).
    func send(frame: ByteBuffer) {
        self.enqueue(.shared(frame), push: true)
    }

    /// What ``enqueue(_:push:)`` queues.
    private enum Message {
        case message([UInt8])
        case messages([[UInt8]])
        case shared(ByteBuffer)

        /// The bytes it takes on the wire, headers included.
        var wireBytes: Int {
            switch self {
            case .message(let text): return text.count + ByteBuffer.wireFrameHeaderLimit
            case .messages(let texts): return texts.reduce(0) { $0 + $1.count + ByteBuffer.wireFrameHeaderLimit }
            case .shared(let text): return text.readableBytes + ByteBuffer.wireFrameHeaderLimit
            }
        }
    }

    /// A shared push at least this long is written from its own buffer rather than copied.
    static let sharedCopyLimit = 4096

    private func enqueue(_ message: Message, push: Bool) {
        enum Action {
            case none
            case schedule(any Channel)
            case later(any Channel, TimeAmount)
            case overflow([CheckedContinuation<Void, Never>])
        }
        let action: Action = self.state.withLock { state in
            guard !state.closed else { return .none }
            let size = message.wireBytes
            if state.pendingBytes + state.inFlightBytes + size > self.limit {
                state.closed = true
                state.pending = []
                state.appendable = false
                state.pendingBytes = 0
                defer { state.drained = [] }
                return .overflow(state.drained)
            }
            self.append(message, size: size, to: &state)
            state.pendingBytes += size
            guard let channel = state.channel, !state.scheduled else { return .none }
            if push && self.coalescing > 0 {
                if state.deferred { return .none }
                let now = WakeScheduler.now()
                let due = state.lastWrite &+ self.coalescing
                if now < due {
                    state.deferred = true
                    return .later(channel, .nanoseconds(Int64(due - now)))
                }
            }
            state.scheduled = true
            return .schedule(channel)
        }
        switch action {
        case .none: break
        case .schedule(let channel): channel.eventLoop.execute { self.write(to: channel) }
        case .later(let channel, let wait): channel.eventLoop.scheduleTask(in: wait) { self.write(to: channel, deferred: true) }
        case .overflow(let waiters):
            for waiter in waiters { waiter.resume() }
            self.overflow()
        }
    }

    /// Appends `message`'s frames to the outbox's own buffer (started if needed, with room for
    /// `size` bytes at least).
    private func append(_ message: Message, size: Int, to state: inout State) {
        if !state.appendable {
            state.pending.append(self.allocator.buffer(capacity: max(256, size)))
            state.appendable = true
        }
        let last = state.pending.count - 1
        switch message {
        case .message(let text):
            state.pending[last].writeWireTextFrame(text)
        case .messages(let texts):
            for text in texts { state.pending[last].writeWireTextFrame(text) }
        case .shared(let text) where text.readableBytes < Self.sharedCopyLimit:
            state.pending[last].writeWireTextFrame(text.readableBytesView)
        case .shared(let text):
            state.pending[last].writeWireTextFrameHeader(length: text.readableBytes)
            state.pending.append(text)
            state.appendable = false
        }
    }

    /// On the channel's event loop: writes everything queued, with one flush. `deferred`: the job
    /// scheduled for the end of a coalescing interval.
    ///
    /// The buffers hold whole frames, so they are written below NIO's frame encoder (through its
    /// context, as it writes the frames it encodes); a channel with no encoder (a test's) takes
    /// them as they are.
    private func write(to channel: any Channel, deferred: Bool = false) {
        let now = self.coalescing > 0 ? WakeScheduler.now() : 0
        let (buffers, bytes): ([ByteBuffer], Int) = self.state.withLock { state in
            if deferred { state.deferred = false } else { state.scheduled = false }
            if !state.pending.isEmpty { state.lastWrite = now }
            defer {
                state.pending = []
                state.appendable = false
                state.inFlightBytes += state.pendingBytes
                state.pendingBytes = 0
            }
            return (state.pending, state.pendingBytes)
        }
        guard !buffers.isEmpty else {
            // Dropped by an overflow after this job was queued: a finish() may be waiting.
            return self.resumeIfIdle()
        }
        let written = channel.eventLoop.makePromise(of: Void.self)
        let encoder = try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        for (i, buffer) in buffers.enumerated() {
            let promise = i == buffers.count - 1 ? written : nil
            if let encoder {
                encoder.write(NIOAny(buffer), promise: promise)
            } else {
                channel.write(buffer, promise: promise)
            }
        }
        channel.flush()
        written.futureResult.whenComplete { _ in
            // Written, or never will be (the connection closed): either way no longer waiting.
            self.state.withLock { $0.inFlightBytes -= bytes }
            self.resumeIfIdle()
        }
    }

    /// Resumes the ``finish()`` callers once nothing is queued, scheduled or in flight.
    private func resumeIfIdle() {
        let waiters: [CheckedContinuation<Void, Never>] = self.state.withLock { state in
            guard state.isIdle else { return [] }
            defer { state.drained = [] }
            return state.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops taking messages and returns once everything queued was written (or the connection
    /// failed): then the close frame may follow.
    func finish() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = self.state.withLock { state -> Bool in
                state.closed = true
                // Never attached (or cut off): nothing will be written.
                if state.isIdle || state.channel == nil {
                    state.pending = []
                    state.appendable = false
                    return true
                }
                state.drained.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }
}
