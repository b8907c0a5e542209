import CanopyCluster
import CanopyConnection
import CanopyCore
import Logging
import NIOHTTP1
import Synchronization

/// A follower's writes on their way to the namespace's leader: queued in arrival order and sent
/// in batches, one batch in flight at a time (so each client's writes reach the leader in the
/// order it sent them); each answered once the follower applied the record it became.
final class WriteForwarder: Sendable {
    private struct Pending {
        var request: ForwardedWrites.Request
        /// The request as it goes in a batch's body.
        var encoded: [UInt8]
        var done: @Sendable (ForwardedWrites.Outcome) -> Void
    }

    private struct State {
        var queue = Queue<Pending>()
        /// The leader's address (`http://HOST:PORT`), as last looked up.
        var leader: String
    }

    let name: String
    private let follower: LogFollower
    private let membership: ClusterMembership
    private let client: HTTPClient
    /// Runs when no live node leads the namespace: this node stops following it (its next
    /// request takes the lead).
    private let leaderless: @Sendable () -> Void
    private let state: Mutex<State>

    /// The most requests in one batch.
    static let batchLimit = 512
    /// The most bytes of requests in one batch (a larger write goes alone): a few large writes
    /// do not make a body the leader refuses (it takes four times a client's body limit) or
    /// hold both nodes' memory.
    static let batchBytes = 4 << 20

    /// How long a batch waits for the leader's answer: two leases (past one, a leader that does
    /// not answer is replaced; its late answers are refused by the log's fencing anyway), and
    /// at least 10 s.
    private var timeout: Duration { max(.seconds(10), self.membership.store.configuration.lease * 2) }

    init(
        name: String, leader: String, follower: LogFollower, membership: ClusterMembership, client: HTTPClient,
        leaderless: @escaping @Sendable () -> Void
    ) {
        self.name = name
        self.follower = follower
        self.membership = membership
        self.client = client
        self.leaderless = leaderless
        self.state = Mutex(State(leader: leader))
    }

    /// The leader's address as last looked up.
    var leader: String { self.state.withLock { $0.leader } }

    /// Sends `request` to the leader; `done` gets its outcome once the record it became is
    /// applied here (or at once when it was refused or failed).
    func forward(_ request: ClientWrite, done: @escaping @Sendable (ClientWriteOutcome) -> Void) {
        self.enqueue(ForwardedWrites.Request(write: request, session: nil)) { outcome in
            switch outcome {
            case .write(let outcome): done(outcome)
            case .registered: done(.failed(DatabaseError(.clusterUnavailable, "The leader registered a write it was asked to apply.")))
            }
        }
    }

    /// Asks the leader to register `write` to run when `session` (a connection held here)
    /// closes, if the rules allow it now; returns the registration's id.
    func register(_ write: ClientWrite, session: String) async -> Result<Int64, ClientWriteOutcomeRefusal> {
        await withCheckedContinuation { continuation in
            self.enqueue(ForwardedWrites.Request(write: write, session: session)) { outcome in
                switch outcome {
                case .registered(let id): continuation.resume(returning: .success(id))
                case .write(.written): continuation.resume(returning: .failure(ClientWriteOutcomeRefusal(.failed(Self.confused))))
                case .write(let refusal): continuation.resume(returning: .failure(ClientWriteOutcomeRefusal(refusal)))
                }
            }
        }
    }

    private static let confused = DatabaseError(.clusterUnavailable, "The leader applied a write it was asked to register.")

    private func enqueue(_ request: ForwardedWrites.Request, done: @escaping @Sendable (ForwardedWrites.Outcome) -> Void) {
        let pending = Pending(request: request, encoded: ForwardedWrites.encode(request), done: done)
        if self.state.withLock({ $0.queue.enqueue(pending) }) { Task { await self.send() } }
    }

    private func send() async {
        while true {
            let batch = self.state.withLock { $0.queue.nextBatch(limit: Self.batchLimit, maxBytes: Self.batchBytes) { $0.encoded.count } }
            if batch.isEmpty { return }
            let (outcomes, committed) = await self.exchange(batch.map(\.encoded))
            // Answered once the follower shows what they wrote (read-your-writes here), and what
            // the leader showed when it refused the others.
            let last =
                (outcomes.compactMap { outcome -> Int64? in
                    if case .write(.written(let sequence?, _)) = outcome { return sequence }
                    return nil
                } + [committed].compactMap { $0 }).max()
            if let last, !(await self.follower.waitUntilApplied(last)) {
                let closed = ForwardedWrites.Outcome.write(
                    .failed(DatabaseError(.closed, "This node stopped following namespace \(self.name).")))
                for pending in batch { pending.done(closed) }
                continue
            }
            for (pending, outcome) in zip(batch, outcomes) { pending.done(outcome) }
        }
    }

    /// Sends one batch; on a connection refused or a node that no longer leads, looks the leader
    /// up again and retries once. A batch whose answer was lost fails: whether it was applied is
    /// unknown, as with a leader that dies mid-write; the leader is looked up again for the next.
    private func exchange(_ requests: [[UInt8]]) async -> (outcomes: [ForwardedWrites.Outcome], committed: Int64?) {
        let body = ForwardedWrites.body(requests, node: self.membership.currentNode.id)
        let headers = [(ClusterWriteRoute.secretHeader, self.membership.secret)]
        var failure = DatabaseError(.clusterUnavailable, "The leader of namespace \(self.name) cannot be reached.")
        for attempt in 0..<2 {
            let leader = self.leader
            var mayRetry = false
            do throws(HTTPClient.Failure) {
                let (host, port) = ClusterMembership.endpoint(of: leader)
                let response = try await self.client.send(
                    .POST, host: host, port: port, ClusterWriteRoute.target(self.name), headers: headers, body: body, timeout: self.timeout)
                if response.status == 200 {
                    do throws(DatabaseError) {
                        return try ForwardedWrites.decodeOutcomes(response.body, count: requests.count)
                    } catch {
                        return (requests.map { _ in .write(.failed(error)) }, nil)
                    }
                }
                if response.status == ClusterWriteRoute.notLeaderStatus {
                    mayRetry = true
                } else {
                    failure = DatabaseError(
                        .clusterUnavailable,
                        "The leader of namespace \(self.name) refused forwarded writes (HTTP \(response.status)): \(String(decoding: response.body, as: UTF8.self))"
                    )
                }
            } catch {
                mayRetry = !error.sent
                failure = DatabaseError(
                    .clusterUnavailable,
                    error.sent
                        ? "The leader at \(leader) did not answer: \(error.reason). Whether the write was applied is unknown."
                        : "Cannot reach the leader at \(leader): \(error.reason).")
            }
            // The leader may have changed, or died: look it up again (for this batch when nothing
            // of it was applied, else for the next).
            let found = await self.lookUpLeader()
            if let found { failure = found }
            guard mayRetry, found == nil, attempt == 0 else { break }
        }
        return (requests.map { _ in .write(.failed(failure)) }, nil)
    }

    /// Looks the namespace's leader up in PostgreSQL; returns why writes cannot go on (no live
    /// leader: this node stops following the namespace, to take it over on its next request).
    private func lookUpLeader() async -> DatabaseError? {
        do throws(DatabaseError) {
            guard let next = try await self.membership.leaderElsewhere(of: self.name) else {
                self.leaderless()
                return DatabaseError(.clusterUnavailable, "Namespace \(self.name) has no live leader; this node takes it over, try again.")
            }
            self.state.withLock { $0.leader = next }
            return nil
        } catch {
            return error
        }
    }
}
