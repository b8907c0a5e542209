import CanopyCore
import CanopyWire
import Foundation
import HTTPTypes
import Prometheus
import Synchronization

/// The server's metrics, served at `GET /.metrics` in Prometheus' text format (swift-prometheus,
/// one registry per server, no global state): requests by method and status class, SDK
/// connections and their requests, event streams, slow clients cut off, namespaces, and the
/// process' memory and open files.
///
/// Counters are atomics updated where the event happens; the gauges of what is open now are read
/// when the metrics are scraped. Nothing here costs more than an atomic increment per request.
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()

    /// Request counters by method (`methods`, then `OTHER`) and status class (`1xx` … `5xx`).
    private let requests: [[Counter]]
    private static let methods: [HTTPRequest.Method] = [.get, .put, .post, .patch, .delete, .head, .options]

    private let streamsOpened: Counter
    private let webSocketsOpened: Counter
    /// SDK requests by action (``ClientAction/metricNames``, indexed by ``ClientAction/metricIndex``).
    private let webSocketRequests: [Counter]
    private let webSocketDenied: Counter
    /// Clients cut off for not reading, by transport (indexed by ``OutboxTransport/rawValue``).
    private let slowClients: [Counter]
    private let longPollsOpened: Counter
    private let openLongPolls: Gauge

    private let openStreams: Gauge
    private let openWebSockets: Gauge
    private let namespaces: Gauge
    private let residentMemory: Gauge
    private let openFiles: Gauge
    /// By followed namespace: the last record applied here and the records known committed but
    /// not applied yet (`--replicas`).
    private let replicaGauges = Mutex<[String: (applied: Gauge, lag: Gauge)]>([:])

    init() {
        let registry = self.registry
        func name(_ namespace: String, _ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: namespace, metricName: metric, unitName: unit, helpText: help)
        }
        let requests = name("canopy", "http_requests", "total", "HTTP requests answered (REST, event streams, the data browser).")
        self.requests = (Self.methods.map(\.rawValue) + ["OTHER"]).map { method in
            (1...5).map { registry.makeCounter(descriptor: requests, labels: [("method", method), ("status", "\($0)xx")]) }
        }
        self.streamsOpened = registry.makeCounter(
            descriptor: name("canopy", "event_streams_opened", "total", "Event streams (SSE) opened."))
        self.webSocketsOpened = registry.makeCounter(
            descriptor: name("canopy", "websocket_connections_opened", "total", "SDK (WebSocket) connections opened."))
        let webSocketRequests = name("canopy", "websocket_requests", "total", "SDK requests received, by action.")
        self.webSocketRequests = ClientAction.metricNames.map {
            registry.makeCounter(descriptor: webSocketRequests, labels: [("action", $0)])
        }
        self.webSocketDenied = registry.makeCounter(
            descriptor: name(
                "canopy", "websocket_permission_denied", "total", "SDK reads, listens and writes refused by the security rules."))
        let slow = name("canopy", "slow_clients", "total", "Clients cut off because they did not read what was sent to them.")
        self.slowClients = OutboxTransport.allCases.map { registry.makeCounter(descriptor: slow, labels: [("transport", $0.label)]) }
        self.longPollsOpened = registry.makeCounter(
            descriptor: name("canopy", "long_poll_sessions_opened", "total", "SDK connections opened over long polling."))
        self.openLongPolls = registry.makeGauge(
            descriptor: name("canopy", "long_poll_sessions", "", "SDK connections over long polling open now."))
        self.openStreams = registry.makeGauge(descriptor: name("canopy", "event_streams", "", "Event streams (SSE) open now."))
        self.openWebSockets = registry.makeGauge(
            descriptor: name("canopy", "websocket_connections", "", "SDK (WebSocket) connections open now."))
        self.namespaces = registry.makeGauge(descriptor: name("canopy", "namespaces", "", "Namespaces (databases) open now."))
        self.residentMemory = registry.makeGauge(descriptor: name("process", "resident_memory", "bytes", "Resident memory size in bytes."))
        self.openFiles = registry.makeGauge(descriptor: name("process", "open_fds", "", "Open file descriptors."))
        registry.makeGauge(
            descriptor: name("canopy", "build_info", "", "Always 1; its version label is the running Canopy's version."),
            labels: [("version", CanopyVersion.current)]
        ).set(Int64(1))
    }

    /// Counts an answered HTTP request.
    func countRequest(_ method: HTTPRequest.Method, status: HTTPResponse.Status) {
        let row = Self.methods.firstIndex(of: method) ?? Self.methods.count
        let column = min(max(status.code / 100, 1), 5) - 1
        self.requests[row][column].increment()
    }

    /// Counts an event stream (SSE) opened.
    func countStreamOpened() { self.streamsOpened.increment() }

    /// Counts an SDK connection opened.
    func countWebSocketOpened() { self.webSocketsOpened.increment() }

    /// Counts an SDK connection opened over long polling.
    func countLongPollOpened() { self.longPollsOpened.increment() }

    /// Counts an SDK read, listen or write the rules refused.
    func countWebSocketDenied() { self.webSocketDenied.increment() }

    /// Counts a client its outbox cut off for not reading: too much waited for it, it took
    /// nothing for a whole timeout, or (long polling) it stopped polling while messages waited.
    func countSlowClient(_ transport: OutboxTransport) { self.slowClients[transport.rawValue].increment() }

    /// Counts an SDK request.
    func countRequest(_ action: ClientAction) {
        self.webSocketRequests[action.metricIndex].increment()
    }

    /// The metrics in Prometheus' text format (version 0.0.4), with the gauges read now.
    func render(state: ServerState) -> [UInt8] {
        self.openStreams.set(Int64(state.streamCount))
        let longPolls = state.longPolls.count
        self.openWebSockets.set(Int64(max(0, state.wireSessions.count - longPolls)))
        self.openLongPolls.set(Int64(longPolls))
        self.namespaces.set(Int64(state.store.openCount))
        self.updateReplicaGauges(
            state.store.openNamespacesNow().compactMap { namespace in
                namespace.follower.map { (namespace.name, $0.follower.applied, $0.follower.lag) }
            })
        if let pages = Self.residentPages() { self.residentMemory.set(Int64(pages * Int(sysconf(Int32(_SC_PAGESIZE))))) }
        if let files = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") { self.openFiles.set(Int64(files.count)) }
        return self.registry.emitToBuffer()
    }

    private func updateReplicaGauges(_ followed: [(name: String, applied: Int64, lag: Int64)]) {
        let registry = self.registry
        self.replicaGauges.withLock { gauges in
            let names = Set(followed.map(\.name))
            for (name, gone) in gauges where !names.contains(name) {
                registry.unregisterGauge(gone.applied)
                registry.unregisterGauge(gone.lag)
                gauges[name] = nil
            }
            for namespace in followed {
                let pair =
                    gauges[namespace.name]
                    ?? (
                        registry.makeGauge(
                            descriptor: MetricNameDescriptor(
                                namespace: "canopy", metricName: "replica_applied", unitName: "records",
                                helpText: "The position of the last log record this follower applied."),
                            labels: [("namespace", namespace.name)]),
                        registry.makeGauge(
                            descriptor: MetricNameDescriptor(
                                namespace: "canopy", metricName: "replica_lag", unitName: "records",
                                helpText: "Log records known committed that this follower has not applied yet."),
                            labels: [("namespace", namespace.name)])
                    )
                gauges[namespace.name] = pair
                pair.applied.set(namespace.applied)
                pair.lag.set(namespace.lag)
            }
        }
    }

    /// The resident set size in pages (`/proc/self/statm`), on Linux.
    private static func residentPages() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        return fields.count >= 2 ? Int(fields[1]) : nil
    }
}

extension ClientAction {
    /// The actions' labels in ``ServerMetrics``.
    static let metricNames = ["listen", "unlisten", "put", "merge", "get", "on_disconnect", "auth", "other"]

    /// The position of the action's label in ``metricNames``.
    var metricIndex: Int {
        switch self {
        case .listen: return 0
        case .unlisten: return 1
        case .put, .putPriority: return 2
        case .merge, .transactionMerge: return 3
        case .get: return 4
        case .onDisconnectPut, .onDisconnectMerge, .onDisconnectCancel: return 5
        case .auth, .unauth: return 6
        case .stats, .appCheck, .unAppCheck, .unknown, .invalid: return 7
        }
    }
}
