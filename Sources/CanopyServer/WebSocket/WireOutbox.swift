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
/// A long answer (a listen's initial value, a read's result: longer than one frame) is not copied
/// into that buffer: it waits in line as its one rendering, and when its turn comes it is written
/// as the SDKs' split frames (``SplitMessage``) a chunk at a time, the next chunk once the client
/// took one, so a value of any size goes out at the pace the client reads it. What is queued
/// behind it follows it, in order.
///
/// Bounded: when more than `limit` bytes of other messages are queued or written but not yet
/// taken by a client that does not read (a single message alone is never too many), or long
/// answers of more than `answerLimit` bytes wait at once (one alone is never too many), the queue
/// is dropped and `overflow` closes the connection; so does a client that takes nothing for a
/// whole `stallTimeout` (see ``StallWatch``). Other connections are not affected.
final class WireOutbox: WireSink, Sendable {
    /// What waits to be written, in order.
    private enum Item {
        /// Whole frames: the outbox's own buffer that messages are appended to, or a large
        /// shared push's text (its header is at the end of the buffer before it).
        case frames(ByteBuffer)
        /// A long answer, written in chunks when its turn comes.
        case split(SplitMessage)
    }

    private struct State {
        var pending: [Item] = []
        /// The outbox's own buffer, after `pending`: messages are appended to it.
        var tail: ByteBuffer?
        /// The long answer being written, ahead of everything in `pending`.
        var current: SplitMessage?
        /// Chunks of long answers written to the channel, not yet to the socket.
        var chunksInFlight = 0
        /// The lifecycle, the byte accounting (the `.frames` in `pending` and `tail` queued,
        /// frames written to the channel but not yet to the socket in flight, the long answers
        /// queued or being written) and the write jobs.
        var machine: StateMachine<any Channel, StallWatch, CheckedContinuation<Void, Never>>

        /// Something waits to be written.
        var isQueued: Bool { self.current != nil || !self.pending.isEmpty || self.tail != nil }

        /// Nothing waits for the client.
        var isDrained: Bool {
            self.pending.isEmpty && self.tail == nil && self.machine.core.bytes.inFlight == 0 && self.current == nil
                && self.chunksInFlight == 0
        }

        /// Forgets everything queued (the connection is cut off or gone; the core forgot its
        /// bytes).
        mutating func drop() {
            self.pending = []
            self.tail = nil
            self.current = nil
        }

        /// Stops taking messages (``StateMachine/finish(_:drained:)``); `true`: `waiter` is not
        /// kept, resume it now.
        mutating func finish(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
            let action = self.machine.finish(waiter, drained: self.isDrained)
            // Never attached, or nothing left: nothing more will be written.
            if action.drops { self.drop() }
            return action.resumesNow
        }
    }

    private let state: Mutex<State>
    private let allocator = ByteBufferAllocator()
    private let stallTimeout: TimeAmount?
    private let overflow: @Sendable () -> Void

    /// The bytes of split frames written to the channel at once; two such chunks at most wait
    /// for the client.
    static let chunkBytes = 128 << 10

    /// - Parameters:
    ///   - limit: The most bytes of messages other than long answers that may wait for the client.
    ///   - answerLimit: The most bytes of long answers that may wait at once (one alone is never
    ///     too many).
    ///   - stallTimeout: How long the client may take nothing before it is cut off; `nil`: forever.
    ///   - coalescing: Nanoseconds; 0 writes every push at once.
    init(
        limit: Int, answerLimit: Int = .max, stallTimeout: TimeAmount? = nil, coalescing: UInt64 = 0,
        overflow: @escaping @Sendable () -> Void
    ) {
        self.stallTimeout = stallTimeout
        let machine = StateMachine<any Channel, StallWatch, CheckedContinuation<Void, Never>>(
            coalescing: coalescing, limit: OutboxLimit(limit), answerLimit: OutboxLimit(answerLimit))
        self.state = Mutex(State(machine: machine))
        self.overflow = overflow
    }

    /// Starts writing to `channel` (what was queued before goes first).
    func attach(_ channel: any Channel) {
        let watch = self.stallTimeout.map { timeout in
            StallWatch(timeout: timeout, eventLoop: channel.eventLoop) { [self] in self.cutOff() }
        }
        let schedule = self.state.withLock { state in
            state.machine.attach(channel, watch: watch, queued: state.isQueued)
        }
        if let schedule { schedule.eventLoop.execute { self.write(to: schedule) } }
    }

    /// Queues one application message (its JSON text), split into frames when it is longer than
    /// 16,384 UTF-16 code units.
    /// `push`: a data push, which may wait for the coalescing interval; otherwise (an answer)
    /// it goes at once, and a long one is written as the client takes it (see ``SplitMessage``).
    func send(_ message: [UInt8], push: Bool) {
        // UTF-16 never needs more code units than UTF-8 needs bytes: a short message is one frame.
        if message.count <= WireFrameSplitter.frameLimit {
            self.enqueue(.message(message), push: push)
        } else if push {
            let frames = WireFrameSplitter.frames(String(decoding: message, as: UTF8.self))
            self.enqueue(.messages(frames.map { Array($0.utf8) }), push: push)
        } else {
            self.enqueue(.answer(Rendering(message)), push: false)
        }
    }

    /// Queues an answer rendered once for many connections (a listen's initial data); a long one
    /// is written as the client takes it, without a copy.
    func send(_ rendering: Rendering) {
        if rendering.bytes.count <= WireFrameSplitter.frameLimit {
            self.enqueue(.message(rendering.bytes), push: false)
        } else {
            self.enqueue(.answer(rendering), push: false)
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
        /// A long answer: split when it is written.
        case answer(Rendering)

        /// The bytes it takes on the wire, headers included (a long answer's text alone).
        var wireBytes: Int {
            switch self {
            case .message(let text): return text.count + ByteBuffer.wireFrameHeaderLimit
            case .messages(let texts): return texts.reduce(0) { $0 + $1.count + ByteBuffer.wireFrameHeaderLimit }
            case .shared(let text): return text.readableBytes + ByteBuffer.wireFrameHeaderLimit
            case .answer(let rendering): return rendering.bytes.count
            }
        }
    }

    /// A shared push at least this long is written from its own buffer rather than copied.
    static let sharedCopyLimit = 4096

    private func enqueue(_ message: Message, push: Bool) {
        enum Action {
            case job(StateMachine<any Channel, StallWatch, CheckedContinuation<Void, Never>>.JobAction)
            case overflow([CheckedContinuation<Void, Never>], StallWatch?)
        }
        let action: Action = self.state.withLock { state in
            let size = message.wireBytes
            let answer = if case .answer = message { true } else { false }
            switch state.machine.core.admit(size, answer: answer) {
            case .refused:
                return .job(.none)
            case .overflow:
                let (waiters, watch) = Self.close(&state)
                return .overflow(waiters, watch)
            case .admitted:
                break
            }
            if case .answer(let rendering) = message {
                if let tail = state.tail {
                    state.pending.append(.frames(tail))
                    state.tail = nil
                }
                state.pending.append(.split(SplitMessage(rendering)))
                state.machine.core.queued(size, answer: true)
            } else {
                state.machine.core.queued(self.append(message, size: size, to: &state), answer: false)
            }
            return .job(state.machine.queued(push: push, now: WakeScheduler.now()))
        }
        switch action {
        case .job(.none): break
        case .job(.now(let channel)): channel.eventLoop.execute { self.write(to: channel) }
        case .job(.later(let channel, let wait)): channel.eventLoop.scheduleTask(in: wait) { self.write(to: channel, deferred: true) }
        case .overflow(let waiters, let watch):
            watch?.stop()
            for waiter in waiters { waiter.resume() }
            self.overflow()
        }
    }

    /// Closes the queue for a client that does not read; returns the ``finish()`` callers.
    private static func close(_ state: inout State) -> ([CheckedContinuation<Void, Never>], StallWatch?) {
        state.drop()
        return state.machine.close()
    }

    /// The ``StallWatch``'s verdict: the client took nothing for a whole timeout.
    private func cutOff() {
        let (waiters, _) = self.state.withLock { Self.close(&$0) }
        for waiter in waiters { waiter.resume() }
        self.overflow()
    }

    /// Appends `message`'s frames to the outbox's own buffer (started if needed, with room for
    /// `size` bytes at least); returns the bytes it queued.
    private func append(_ message: Message, size: Int, to state: inout State) -> Int {
        if state.tail == nil { state.tail = self.allocator.buffer(capacity: max(256, size)) }
        let before = state.tail!.readableBytes
        switch message {
        case .message(let text):
            state.tail!.writeWireTextFrame(text)
        case .messages(let texts):
            for text in texts { state.tail!.writeWireTextFrame(text) }
        case .shared(let text) where text.readableBytes < Self.sharedCopyLimit:
            state.tail!.writeWireTextFrame(text.readableBytesView)
        case .shared(let text):
            state.tail!.writeWireTextFrameHeader(length: text.readableBytes)
            let header = state.tail!.readableBytes - before
            state.pending.append(.frames(state.tail!))
            state.tail = nil
            state.pending.append(.frames(text))
            return header + text.readableBytes
        case .answer:
            preconditionFailure("a long answer is queued as it is")
        }
        return state.tail!.readableBytes - before
    }

    /// What one write job writes: frames already queued (`bytes` of them counted), or a chunk of
    /// a long answer.
    private enum Write {
        case frames([ByteBuffer], bytes: Int)
        case chunk(ByteBuffer)
    }

    /// On the channel's event loop: writes what is queued, with one flush: the frames up to the
    /// next long answer; of a long answer, chunks until two wait for the client (the rest, and
    /// what is queued behind it, when the client took them). `deferred`: the job scheduled for the
    /// end of a coalescing interval.
    ///
    /// The buffers hold whole frames, so they are written below NIO's frame encoder (through its
    /// context, as it writes the frames it encodes); a channel with no encoder (a test's) takes
    /// them as they are.
    private func write(to channel: any Channel, deferred: Bool = false) {
        let (writes, watch): ([Write], StallWatch?) = self.state.withLock { state in
            state.machine.jobStarted(deferred: deferred)
            var writes: [Write] = []
            while true {
                if var current = state.current {
                    guard state.chunksInFlight < 2 else { break }
                    var chunk = self.allocator.buffer(capacity: Self.chunkBytes + 2 * ByteBuffer.wireFrameHeaderLimit + 16)
                    current.writeFrames(into: &chunk, budget: Self.chunkBytes)
                    if current.isFinished {
                        state.current = nil
                        state.machine.core.taken(current.byteCount, answer: true)
                    } else {
                        state.current = current
                    }
                    state.chunksInFlight += 1
                    writes.append(.chunk(chunk))
                    continue
                }
                // The frames up to the next long answer (the tail when there is none).
                var buffers: [ByteBuffer] = []
                while case .frames(let buffer)? = state.pending.first {
                    buffers.append(buffer)
                    state.pending.removeFirst()
                }
                if state.pending.isEmpty, let tail = state.tail {
                    buffers.append(tail)
                    state.tail = nil
                }
                if !buffers.isEmpty {
                    let bytes = buffers.reduce(0) { $0 + $1.readableBytes }
                    state.machine.core.handedOver(bytes)
                    writes.append(.frames(buffers, bytes: bytes))
                }
                guard case .split(let message)? = state.pending.first else { break }
                state.pending.removeFirst()
                state.current = message
            }
            if !writes.isEmpty && state.machine.coalescing > 0 { state.machine.wrote(at: WakeScheduler.now()) }
            return (writes, state.machine.watch)
        }
        guard !writes.isEmpty else {
            // Dropped by an overflow after this job was queued, or waiting for the client: a
            // finish() may be waiting.
            return self.resumeIfIdle()
        }
        let encoder = try? channel.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        func write(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>?) {
            if let encoder {
                encoder.write(NIOAny(buffer), promise: promise)
            } else {
                channel.write(buffer, promise: promise)
            }
        }
        watch?.queued()
        for item in writes {
            let written = channel.eventLoop.makePromise(of: Void.self)
            switch item {
            case .frames(let buffers, let bytes):
                for (i, buffer) in buffers.enumerated() {
                    // A large push goes in slices (views, not copies), each taken by the client
                    // counting as progress.
                    var rest = buffer
                    while rest.readableBytes > Self.chunkBytes, let slice = rest.readSlice(length: Self.chunkBytes) {
                        let taken = channel.eventLoop.makePromise(of: Void.self)
                        write(slice, promise: taken)
                        taken.futureResult.whenSuccess { watch?.progressed(drained: false) }
                    }
                    write(rest, promise: i == buffers.count - 1 ? written : nil)
                }
                written.futureResult.whenComplete { result in
                    self.written(result, to: channel) { $0.machine.core.taken(inFlight: bytes) }
                }
            case .chunk(let chunk):
                write(chunk, promise: written)
                written.futureResult.whenComplete { result in
                    self.written(result, to: channel) { $0.chunksInFlight -= 1 }
                }
            }
        }
        channel.flush()
    }

    /// On the event loop, when a write reached the socket (or never will: the connection closed):
    /// counts the client's progress and writes what waited for it.
    private func written(_ result: Result<Void, any Error>, to channel: any Channel, _ update: (inout State) -> Void) {
        let (next, drained, watch) = self.state.withLock { state in
            update(&state)
            if case .failure = result {
                // Gone: nothing more will be written.
                state.machine.failed()
                state.drop()
            }
            return (state.machine.written(queued: state.isQueued, drained: state.isDrained), state.isDrained, state.machine.watch)
        }
        watch?.progressed(drained: drained)
        if let channel = next.schedule {
            // A job of its own: a write that completes at once (a fast client) does not recurse.
            channel.eventLoop.execute { self.write(to: channel) }
        }
        for waiter in next.resume { waiter.resume() }
    }

    /// Resumes the ``finish()`` callers once nothing is queued, scheduled or in flight.
    private func resumeIfIdle() {
        let waiters = self.state.withLock { $0.machine.idle(drained: $0.isDrained) }
        for waiter in waiters { waiter.resume() }
    }

    /// Stops taking messages and returns once everything queued was written (or the connection
    /// failed): then the close frame may follow.
    func finish() async {
        await OutboxCore.waitUntilFinished { waiter in self.state.withLock { $0.finish(waiter) } }
    }
}
