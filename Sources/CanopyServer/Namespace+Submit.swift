import Canopy
import CanopyCluster
import CanopyCore
import Synchronization

extension Namespace {
    /// Applies `request`: here, when this node leads the namespace (or serves it alone), or at
    /// its leader when this node follows it (``WriteForwarder``). `done` gets the outcome, on
    /// any thread, once the write is durable (at a follower: once the follower applied the log
    /// record it became, so that the client reads its own write here).
    func submit(_ request: ClientWrite, done: @escaping @Sendable (ClientWriteOutcome) -> Void) {
        if let follower = self.follower { return follower.forwarder.forward(request, done: done) }
        self.applyHere(request, done: done)
    }

    /// ``submit(_:done:)``, awaited.
    func submit(_ request: ClientWrite) async -> ClientWriteOutcome {
        await withCheckedContinuation { continuation in self.submit(request) { continuation.resume(returning: $0) } }
    }

    /// Decides and applies `request` on this node's database (never a follower's). With
    /// `sequence`, the outcome names the write's position in the log (a follower waits for it).
    func applyHere(_ request: ClientWrite, sequence: Bool = false, done: @escaping @Sendable (ClientWriteOutcome) -> Void) {
        let journal = self.cluster?.journal
        let accepted = self.database.onLoop { access in
            switch request.decide(on: self, access: access) {
            case .failure(let refusal):
                done(refusal.outcome)
            case .success(let write):
                // In a cluster, its registration goes in the transaction that appends it.
                if let registration = request.registration { journal?.attachOnDisconnect([registration]) }
                guard sequence || request.wantsNode else {
                    // Nothing to read after it: the completion alone answers (the common case).
                    return access.apply(write) { error in done(error.map { .failed($0) } ?? .written(sequence: nil, node: nil)) }
                }
                let rendezvous = OutcomeRendezvous(done)
                access.apply(
                    write, completion: { error in rendezvous.complete(error) },
                    applied: {
                        rendezvous.applied(
                            sequence: sequence ? access.lastSequence.map { Int64($0) } : nil,
                            node: request.wantsNode ? access.node(at: write.path) : nil)
                    })
            }
        }
        if !accepted { done(.failed(.databaseClosed)) }
    }
}

/// Joins what a write left (read right after it is applied) and its durability completion
/// (which may come first, when the write fails, or later).
private final class OutcomeRendezvous: Sendable {
    private struct State {
        var applied: (sequence: Int64?, node: Node?)?
        var completed: DatabaseError??
        var done: (@Sendable (ClientWriteOutcome) -> Void)?
    }

    private let state: Mutex<State>

    init(_ done: @escaping @Sendable (ClientWriteOutcome) -> Void) {
        self.state = Mutex(State(done: done))
    }

    func applied(sequence: Int64?, node: Node?) {
        self.resolve { $0.applied = (sequence, node) }
    }

    func complete(_ error: DatabaseError?) {
        self.resolve { $0.completed = .some(error) }
    }

    private func resolve(_ update: (inout State) -> Void) {
        let ready: (@Sendable (ClientWriteOutcome) -> Void, ClientWriteOutcome)? = self.state.withLock { state in
            update(&state)
            guard let done = state.done, let completed = state.completed else { return nil }
            if let error = completed {
                state.done = nil
                return (done, .failed(error))
            }
            guard let applied = state.applied else { return nil }
            state.done = nil
            return (done, .written(sequence: applied.sequence, node: applied.node))
        }
        if let (done, outcome) = ready { done(outcome) }
    }
}
