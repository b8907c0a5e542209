import Canopy
import CanopyCore
import CanopyServer
import CanopyTestSupport
import Dispatch
import Synchronization

/// An in-memory server answering requests in-process, with a known tree in namespace `default`,
/// for the targets that go through the REST handler.
final class FuzzServer: Sendable {
    /// For the targets that only read (`path`, `query`): its tree never changes.
    static let reads = FuzzServer()
    /// For the `rest` target, which writes (and puts the seed back).
    static let writes = FuzzServer()

    /// The tree every request starts from.
    static let seed =
        #"{"items":{"a":{"n":3,"s":"x",".priority":2},"b":{"n":1,"s":"y"},"c":{"n":2},"d":5,"e":"z","f":true},"users":{"ada":{"name":"Ada"}},"n":7}"#

    let server: CanopyServer
    let database: Database
    let seedNode: Node

    private init() {
        var configuration = ServerConfiguration()
        configuration.maxBodyBytes = 1 << 16
        self.server = CanopyServer(configuration: configuration, store: NamespaceStore(directory: nil, maxNamespaces: 4))
        let store = self.server.store
        self.database = blocking { try! await store.database("default") }
        var builder = NodeBuilder()
        self.seedNode = try! JSONParser().parse(Self.seed, into: &builder).node
        self.reset()
    }

    /// Puts the seed tree back.
    func reset() {
        let done = DispatchSemaphore(value: 0)
        self.database.write(.set(.root, WriteValue(node: self.seedNode))) { _ in done.signal() }
        done.waitOrStop("the database to answer")
    }

    /// The whole tree, read on the loop.
    func tree() -> Node {
        let result = Mutex<Node?>(nil)
        let done = DispatchSemaphore(value: 0)
        self.database.onLoop { access in
            result.withLock { $0 = access.root }
            done.signal()
        }
        done.waitOrStop("the database to answer")
        return result.withLock { $0! }
    }

    func respond(method: String, target: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []) -> CanopyServer
        .InProcessResponse?
    {
        blocking { await self.server.respond(method: method, target: target, headers: headers, body: body) }
    }
}

/// Runs `body` on the test servers' executor and waits for it: the fuzz entry point is synchronous
/// (and may hold one of Swift concurrency's few threads while it waits).
func blocking<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task(executorPreference: testServerExecutor) {
        let value = await body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.waitOrStop("the server to respond")
    return result.withLock { $0! }
}

/// Checks the status is one of `allowed` and that an error status comes with `{"error": "..."}`
/// (a 412 with the current value instead).
func requireErrorBody(_ response: CanopyServer.InProcessResponse, allowed: Set<Int>, request: String) throws(FuzzFailure) {
    try require(allowed.contains(response.status), "\(request) answered \(response.status) \(describe(response.body))")
    guard response.status >= 400 else { return }
    var builder = JSONValueBuilder()
    if response.status == 412 {
        // A failed if-match answers with the current value and its ETag.
        try require(
            response.header("ETag") != nil && (try? JSONParser().parse(response.body, into: &builder)) != nil,
            "\(request) answered 412 without the current value and its ETag")
        return
    }
    guard case .object(let members)? = try? JSONParser().parse(response.body, into: &builder),
        members.count == 1, case .string(let message)? = members["error"], !message.isEmpty
    else {
        throw FuzzFailure("\(request) answered \(response.status) without a JSON error body: \(describe(response.body))")
    }
}
