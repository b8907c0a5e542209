import Canopy
import CanopyCluster
import CanopyCore
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// `POST /.cluster/write?ns=NAME`: writes a follower forwards to this node, the namespace's
/// leader (the DocC article *Cluster*, section *Replicas*).
enum ClusterWriteRoute {
    static let path = "/.cluster/write"
    /// The header carrying the cluster's node secret.
    static let secretHeader = "Canopy-Node-Secret"
    /// The answer of a node that does not lead the namespace (the follower looks the leader up
    /// again): 421 Misdirected Request.
    static let notLeaderStatus = 421

    static func target(_ namespace: String) -> String { "\(self.path)?ns=\(namespace)" }
}

extension CanopyResponder {
    func clusterWrite(_ request: inout Request) async throws(RESTError) -> Response {
        guard let cluster = self.state.store.cluster, request.method == .post else {
            throw RESTError(.notFound, "Not found.")
        }
        let presented = HTTPField.Name(ClusterWriteRoute.secretHeader).flatMap { request.headers[$0] } ?? ""
        // No detail: the secret is not probed.
        guard Self.constantTimeEqual(presented, cluster.secret) else { throw RESTError.permissionDenied }
        guard let name = request.uri.queryParameters.get("ns"), NamespaceStore.isValidName(name) else {
            throw .badRequest("A forwarded write names no valid namespace (ns=).")
        }
        // A batch carries writes each as large as a client may send, base64-encoded.
        let clientLimit = self.state.configuration.maxBodyBytes
        let body = try await self.body(&request, limit: clientLimit > Int.max / 4 ? Int.max : clientLimit * 4)
        let (node, requests): (Int32, [ForwardedWrites.Request])
        do throws(DatabaseError) {
            (node, requests) = try ForwardedWrites.decode(body)
        } catch {
            throw .badRequest(error.message)
        }
        let namespace: Namespace
        do {
            namespace = try await self.state.store.namespace(name, create: true, follow: false)
        } catch let error as RESTError where error.redirect != nil {
            throw RESTError(HTTPResponse.Status(code: ClusterWriteRoute.notLeaderStatus), "This node does not lead namespace \(name).")
        } catch let error as RESTError {
            throw error
        } catch {
            throw RESTError(.serviceUnavailable, "\(error)")
        }
        guard let binding = namespace.cluster else {
            throw RESTError(HTTPResponse.Status(code: ClusterWriteRoute.notLeaderStatus), "This node does not lead namespace \(name).")
        }
        var outcomes = [ForwardedWrites.Outcome](repeating: .write(.denied), count: requests.count)
        for (index, request) in requests.enumerated() {
            if let session = request.session {
                outcomes[index] = await Self.register(request.write, session: session, node: node, in: namespace, binding: binding)
            }
        }
        // The writes are queued on the loop in the order sent, and awaited together.
        let writes = requests.indices.filter { requests[$0].session == nil }
        let written: [Int: ClientWriteOutcome] = await withCheckedContinuation { continuation in
            let collector = OutcomeCollector(count: writes.count, continuation)
            for index in writes { namespace.applyHere(requests[index].write, sequence: true) { collector.set(index, $0) } }
        }
        for (index, outcome) in written {
            // Refused by the rules now: it never runs, so PostgreSQL forgets it.
            if case .denied = outcome, let registration = requests[index].write.registration {
                try? await binding.store.cancelOnDisconnect([registration], in: name)
            }
            outcomes[index] = .write(outcome)
        }
        // What the leader showed when it decided, committed: the follower shows it too before it
        // answers (a transaction refused as stale retries against the data that refused it).
        let head = try? await namespace.database.loop { $0.lastSequence }
        var committed: Int64?
        if let head = head ?? nil {
            let error: DatabaseError? = await withCheckedContinuation { continuation in
                binding.journal.whenDurable(through: head) { continuation.resume(returning: $0) }
            }
            if error == nil { committed = Int64(head) }
        }
        return JSONBody.response(ForwardedWrites.encode(outcomes, committed: committed))
    }

    /// Registers a follower's client's onDisconnect write, if the rules allow it now.
    private static func register(
        _ write: ClientWrite, session: String, node: Int32, in namespace: Namespace, binding: ClusterBinding
    ) async -> ForwardedWrites.Outcome {
        let allowed: Bool
        do throws(RESTError) {
            allowed = try await namespace.database.loop { access in
                namespace.permitted(write.write, identity: write.identity, access: access) != nil
            }
        } catch {
            return .write(.failed(.databaseClosed))
        }
        guard allowed else { return .write(.denied) }
        do throws(DatabaseError) {
            let id = try await binding.store.addOnDisconnect(
                LogRecord.encode(write.write, sequence: 0, now: 0), session: session, under: binding.lease, through: node)
            return .registered(id)
        } catch {
            return .write(.failed(error))
        }
    }
}

/// Gathers the outcomes of a batch's writes and resumes its continuation with all of them.
private final class OutcomeCollector: Sendable {
    private let state: Mutex<(outcomes: [Int: ClientWriteOutcome], remaining: Int)>
    private let continuation: CheckedContinuation<[Int: ClientWriteOutcome], Never>

    init(count: Int, _ continuation: CheckedContinuation<[Int: ClientWriteOutcome], Never>) {
        self.state = Mutex(([:], count))
        self.continuation = continuation
        if count == 0 { continuation.resume(returning: [:]) }
    }

    func set(_ index: Int, _ outcome: ClientWriteOutcome) {
        let all = self.state.withLock { state -> [Int: ClientWriteOutcome]? in
            state.outcomes[index] = outcome
            state.remaining -= 1
            return state.remaining == 0 ? state.outcomes : nil
        }
        if let all { self.continuation.resume(returning: all) }
    }
}
