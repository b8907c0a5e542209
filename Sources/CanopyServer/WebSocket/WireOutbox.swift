import CanopyWire
import NIOCore
import Synchronization

/// One WebSocket connection's outgoing messages, in order: the database loop (pushes), the
/// connection's request task (responses) and the journal thread (write acknowledgements) queue
/// them; the connection's writer task sends them.
///
/// Bounded: when more than `limit` bytes wait for a client that does not read, the queue is
/// dropped and `overflow` closes the connection; other connections are not affected.
final class WireOutbox: Sendable {
    private struct State {
        var frames: [ByteBuffer] = []
        var bytes = 0
        var waiter: CheckedContinuation<[ByteBuffer]?, Never>?
        var closed = false
    }

    private let state = Mutex(State())
    private let limit: Int
    private let overflow: @Sendable () -> Void

    init(limit: Int, overflow: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.overflow = overflow
    }

    /// Queues one application message (its JSON text), split into frames when it is longer than
    /// 16,384 UTF-16 code units.
    func send(_ message: [UInt8]) {
        // UTF-16 never needs more code units than UTF-8 needs bytes: a short message is one frame.
        if message.count <= WireFrameSplitter.frameLimit {
            self.enqueue([ByteBuffer(bytes: message)])
        } else {
            self.enqueue(WireFrameSplitter.frames(String(decoding: message, as: UTF8.self)).map { ByteBuffer(string: $0) })
        }
    }

    /// Queues a message already rendered into one frame (a push shared by many connections).
    func send(frame: ByteBuffer) {
        self.enqueue([frame])
    }

    private func enqueue(_ frames: [ByteBuffer]) {
        enum Action {
            case none
            case wake(CheckedContinuation<[ByteBuffer]?, Never>, [ByteBuffer])
            case overflow(CheckedContinuation<[ByteBuffer]?, Never>?)
        }
        let action: Action = self.state.withLock { state in
            guard !state.closed else { return .none }
            let size = frames.reduce(0) { $0 + $1.readableBytes }
            if state.bytes + size > self.limit {
                state.closed = true
                state.frames = []
                defer { state.waiter = nil }
                return .overflow(state.waiter)
            }
            if let waiter = state.waiter {
                state.waiter = nil
                return .wake(waiter, frames)
            }
            state.frames.append(contentsOf: frames)
            state.bytes += size
            return .none
        }
        switch action {
        case .none: break
        case .wake(let waiter, let frames): waiter.resume(returning: frames)
        case .overflow(let waiter):
            waiter?.resume(returning: nil)
            self.overflow()
        }
    }

    /// The frames queued so far, waiting for one when there is none; `nil` once closed.
    func next() async -> [ByteBuffer]? {
        await withCheckedContinuation { continuation in
            let now: [ByteBuffer]?? = self.state.withLock { state in
                if !state.frames.isEmpty {
                    defer {
                        state.frames = []
                        state.bytes = 0
                    }
                    return .some(state.frames)
                }
                if state.closed { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Stops taking messages; the writer gets `nil` once what is queued is sent.
    func close() {
        let waiter = self.state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.frames.isEmpty ? state.waiter : nil
        }
        waiter?.resume(returning: nil)
    }
}
