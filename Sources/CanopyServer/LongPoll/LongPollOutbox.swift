import CanopyWire
import NIOCore
import Synchronization

/// A long-poll connection's outgoing messages, in order, for the client's polls: each poll takes
/// what is queued (up to ``batchBytes``, at least one message) as one numbered batch; a poll that
/// finds nothing is held until a message comes or its hold ends (see ``StateMachine``).
///
/// Bounded as a WebSocket's ``WireOutbox`` is: more than `limit` bytes of messages other than
/// long answers, or more than `answerLimit` bytes of long answers, waiting at once (one message
/// alone is never too many) cut the client off; so does a client that leaves messages waiting
/// for a whole `stall` timeout, or that stops polling for an `idle` one.
final class LongPollOutbox: WireSink, Sendable {
    /// What a poll takes.
    enum Reply: Equatable, Sendable {
        /// Batch `number` (numbered from 0, in order): messages' JSON texts.
        case messages(number: Int, [[UInt8]])
        /// Nothing came during the hold.
        case nothing
        /// The session is over; `last`: the number of the last batch sent, if any.
        case closed(last: Int?)
    }

    private typealias Machine = StateMachine<CheckedContinuation<Reply, Never>, CheckedContinuation<Void, Never>>

    private struct Message {
        let text: [UInt8]
        /// A long answer (counted against the answer limit).
        let isAnswer: Bool
    }

    private struct State {
        var queue: [Message] = []
        /// The first message of `queue` not yet taken (the queue is compacted when drained).
        var head = 0
        var nextNumber = 0
        /// The polls, the lifecycle and the byte accounting.
        var machine: Machine

        var isDrained: Bool { self.head == self.queue.count }

        /// Forgets what is queued (the session ended; the core forgot its bytes).
        mutating func drop() {
            self.queue = []
            self.head = 0
        }

        /// Stops taking messages (``StateMachine/finish(_:drained:)``); `true`: `waiter` is not
        /// kept, resume it now.
        mutating func finish(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
            let action = self.machine.finish(waiter, drained: self.isDrained)
            if action.drops { self.drop() }
            return action.resumesNow
        }

        /// Takes the next batch: at least one message, then more while they fit `budget` bytes.
        mutating func take(budget: Int) -> Reply {
            guard !self.isDrained else { return .nothing }
            var texts: [[UInt8]] = []
            var size = 0
            while self.head < self.queue.count {
                let message = self.queue[self.head]
                if !texts.isEmpty && size + message.text.count > budget { break }
                texts.append(message.text)
                size += message.text.count
                self.machine.core.taken(message.text.count, answer: message.isAnswer)
                self.head += 1
            }
            if self.isDrained {
                self.queue = []
                self.head = 0
            }
            defer { self.nextNumber += 1 }
            return .messages(number: self.nextNumber, texts)
        }

        var lastNumber: Int? { self.nextNumber > 0 ? self.nextNumber - 1 : nil }
    }

    private let state: Mutex<State>
    private let hold: TimeAmount
    private let eventLoop: any EventLoop
    /// Called once, on the event loop, when the client is cut off (`true`: it left messages
    /// waiting or too many queued) or stopped polling (`false`).
    private let cutOff = Mutex<(@Sendable (_ slow: Bool) -> Void)?>(nil)

    /// The most bytes of messages one poll takes (a longer message goes alone).
    static let batchBytes = 128 << 10

    /// - Parameters:
    ///   - limit: The most bytes of messages other than long answers that may wait.
    ///   - answerLimit: The most bytes of long answers that may wait at once.
    ///   - idle: How long the client may go without polling.
    ///   - stall: How long messages may wait for a poll.
    ///   - hold: How long a poll is held when nothing is queued.
    init(
        limit: Int, answerLimit: Int = .max, idle: TimeAmount, stall: TimeAmount, hold: TimeAmount, eventLoop: any EventLoop
    ) {
        self.hold = hold
        self.eventLoop = eventLoop
        let machine = Machine(
            now: Self.now(), idle: UInt64(max(1, idle.nanoseconds)), stall: UInt64(max(1, stall.nanoseconds)),
            limit: OutboxLimit(limit), answerLimit: OutboxLimit(answerLimit))
        self.state = Mutex(State(machine: machine))
    }

    /// Starts the idle checks; `cutOff` ends the session when they (or an overflow) find the
    /// client gone.
    func start(cutOff: @escaping @Sendable (_ slow: Bool) -> Void) {
        self.cutOff.withLock { $0 = cutOff }
        let first = self.state.withLock { $0.machine.firstCheck }
        self.perform([first])
    }

    // MARK: Messages

    func send(_ message: [UInt8], push: Bool) {
        self.enqueue(Message(text: message, isAnswer: !push && message.count > WireFrameSplitter.frameLimit))
    }

    func send(_ rendering: Rendering) {
        self.enqueue(Message(text: rendering.bytes, isAnswer: rendering.bytes.count > WireFrameSplitter.frameLimit))
    }

    func send(frame: ByteBuffer) {
        self.enqueue(Message(text: Array(frame.readableBytesView), isAnswer: false))
    }

    private func enqueue(_ message: Message) {
        enum Outcome {
            case queued([Machine.Action], [(CheckedContinuation<Reply, Never>, Reply)])
            case overflow(CheckedContinuation<Reply, Never>?, Reply, [CheckedContinuation<Void, Never>])
        }
        let outcome: Outcome = self.state.withLock { state in
            let size = message.text.count
            switch state.machine.core.admit(size, answer: message.isAnswer) {
            case .refused:
                return .queued([], [])
            case .overflow:
                state.drop()
                let (held, waiters) = state.machine.close()
                return .overflow(held, .closed(last: state.lastNumber), waiters)
            case .admitted:
                break
            }
            state.queue.append(message)
            state.machine.core.queued(size, answer: message.isAnswer)
            let actions = state.machine.queued(now: Self.now())
            return .queued(actions, self.replies(to: actions, &state))
        }
        switch outcome {
        case .queued(let actions, let replies):
            for (poll, reply) in replies { poll.resume(returning: reply) }
            self.perform(actions)
        case .overflow(let held, let reply, let waiters):
            held?.resume(returning: reply)
            for waiter in waiters { waiter.resume() }
            self.end(slow: true)
        }
    }

    // MARK: Polls

    /// A poll: returns what is queued at once, or waits for a message or the end of its hold.
    func poll() async -> Reply {
        await withCheckedContinuation { (continuation: CheckedContinuation<Reply, Never>) in
            let (actions, replies, waiters) = self.state.withLock { state in
                let actions = state.machine.poll(continuation, now: Self.now(), queued: !state.isDrained)
                let replies = self.replies(to: actions, &state)
                return (actions, replies, state.machine.taken(drained: state.isDrained))
            }
            for (poll, reply) in replies { poll.resume(returning: reply) }
            for waiter in waiters { waiter.resume() }
            self.perform(actions)
        }
    }

    /// The replies that `actions` ask for, taken from the queue in order (under the lock).
    private func replies(to actions: [Machine.Action], _ state: inout State) -> [(CheckedContinuation<Reply, Never>, Reply)] {
        actions.compactMap { action in
            switch action {
            case .answer(let poll): (poll, state.take(budget: Self.batchBytes))
            case .refuse(let poll): (poll, .closed(last: state.lastNumber))
            case .hold, .check: nil
            }
        }
    }

    /// Arms the timers `actions` ask for.
    private func perform(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .hold(let token):
                self.eventLoop.scheduleTask(in: self.hold) { self.holdEnded(token) }
            case .check(let after):
                self.eventLoop.scheduleTask(in: .nanoseconds(Int64(min(after, UInt64(Int64.max))))) { self.check() }
            case .answer, .refuse:
                break
            }
        }
    }

    private func holdEnded(_ token: UInt64) {
        let (actions, replies, waiters) = self.state.withLock { state in
            let actions = state.machine.holdEnded(token, now: Self.now())
            let replies = self.replies(to: actions, &state)
            return (actions, replies, state.machine.taken(drained: state.isDrained))
        }
        for (poll, reply) in replies { poll.resume(returning: reply) }
        for waiter in waiters { waiter.resume() }
        self.perform(actions)
    }

    private func check() {
        let result = self.state.withLock { state in
            let result = state.machine.check(now: Self.now(), queued: !state.isDrained)
            if case .expired = result { state.drop() }
            return result
        }
        switch result {
        case .none:
            break
        case .again(let after):
            self.perform([.check(after: after)])
        case .expired(let slow, let waiters):
            for waiter in waiters { waiter.resume() }
            self.end(slow: slow)
        }
    }

    /// Tells the session it is over (once).
    private func end(slow: Bool) {
        guard
            let cutOff = self.cutOff.withLock({ cutOff in
                defer { cutOff = nil }
                return cutOff
            })
        else { return }
        // On the event loop: never inside a caller's lock (a request being handled may be
        // what overflowed).
        self.eventLoop.execute { cutOff(slow) }
    }

    // MARK: Lifecycle

    /// The session is over: a held poll is told so, nothing more is taken.
    func close() {
        let (held, reply, waiters) = self.state.withLock { state in
            state.drop()
            let (held, waiters) = state.machine.close()
            return (held, Reply.closed(last: state.lastNumber), waiters)
        }
        self.cutOff.withLock { $0 = nil }
        held?.resume(returning: reply)
        for waiter in waiters { waiter.resume() }
    }

    func finish() async {
        await OutboxCore.waitUntilFinished { waiter in self.state.withLock { $0.finish(waiter) } }
    }

    /// The number of the last batch taken, if any.
    var lastNumber: Int? { self.state.withLock { $0.lastNumber } }

    private static func now() -> UInt64 { WakeScheduler.now() }
}
