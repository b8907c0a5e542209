import CanopyCore
import Logging
import Synchronization

/// The triggers of a database and the work their handlers start.
///
/// A trigger's handler runs on the loop right after the write it reacts to is applied. Whatever it
/// starts (writes, transactions, anything queued on the loop) goes to a queue of its own that runs
/// right after the triggers of that write, before any other queued job, one job after another in the
/// order they were issued; their writes may fire more triggers, whose work joins the end of the same
/// queue. So a write and everything triggered by it is applied before the next write, and each job
/// knows how many triggers deep it is.
// @unchecked Sendable: every property but `nextID` is touched only on the loop thread.
final class TriggerState: @unchecked Sendable {
    let tree = TriggerTree()
    let maxDepth: Int
    let logger: Logger
    let nextID = Atomic<UInt64>(1)
    /// Where trigger failures go; `nil`: to `logger`.
    var errorHandler: ((DatabaseError) -> Void)?
    /// How many triggers deep the job running now is (0 outside the queue).
    var depth = 0
    /// While a handler runs: the depth of the write it reacts to.
    var handlerDepth: Int?
    private var queue: [(depth: Int, job: @Sendable () -> Void)] = []
    private var head = 0
    private var draining = false

    init(maxDepth: Int, logger: Logger) {
        self.maxDepth = maxDepth
        self.logger = logger
    }

    func enqueue(_ job: @escaping @Sendable () -> Void, depth: Int) {
        self.queue.append((depth, job))
    }

    /// What `write`'s triggers need of the tree before it, taken before it is applied: nothing when no
    /// trigger watches what it changes; the nodes its entries replace when every trigger watching is
    /// at or below them (holding those shares nothing the write changes in place); the whole tree when
    /// one watches a location above an entry (the write then copies the nodes on its paths).
    func before(_ write: WriteOperation, root: Node) -> TriggerBefore? {
        switch self.tree.watch(write.path.keys, write.entries.lazy.map { Self.targetSlice($0) }) {
        case .none: return nil
        case .above: return .root(root)
        case .atOrBelow:
            let base = root.node(at: write.path.keys)
            return .entries(write.entries.map { base.node(at: Self.targetSlice($0)) })
        }
    }

    static func targetSlice(_ entry: WriteOperation.Entry) -> ArraySlice<ChildKey> {
        entry.isPriority ? entry.path.dropLast() : entry.path[...]
    }

    static func target(_ entry: WriteOperation.Entry) -> [ChildKey] { entry.isPriority ? Array(entry.path.dropLast()) : entry.path }

    /// Runs the queued jobs, and those they queue, unless an outer call is doing so.
    func drain() {
        guard !self.draining else { return }
        self.draining = true
        let outer = self.depth
        while self.head < self.queue.count {
            let (depth, job) = self.queue[self.head]
            self.head += 1
            self.depth = depth
            job()
        }
        self.queue.removeAll(keepingCapacity: self.queue.count <= 1024)
        self.head = 0
        self.depth = outer
        self.draining = false
    }

    func report(_ error: DatabaseError) {
        if let handler = self.errorHandler {
            handler(error)
        } else {
            self.logger.error("Trigger failed: \(error)")
        }
    }
}

/// The data before a write, as its triggers need it (see ``TriggerState/before(_:root:)``).
enum TriggerBefore {
    case root(Node)
    /// The node each entry replaced, in entry order.
    case entries([Node])
}

extension DatabaseCore {
    /// Runs the triggers `write` fires, given the tree `before` it (the engine holds the tree after
    /// it); the work they queue runs in ``TriggerState/drain()`` after. Loop thread only.
    ///
    /// - Complexity: O(*e* · *d*) to find the triggers of *e* entries at depth *d* (more below a
    ///   written location, proportional to what it wrote), O(*d* log *n*) per trigger fired.
    func runTriggers(of write: WriteOperation, before: TriggerBefore, depth: Int) {
        let after = self.engine.root
        var firings: [(entry: TriggerEntry, location: [ChildKey], nodes: (old: Node, new: Node)?)] = []
        var seen: Set<Firing>? = write.entries.count > 1 ? [] : nil
        for (index, entry) in write.entries.enumerated() {
            let path = write.path.keys + TriggerState.target(entry)
            let old: Node
            switch before {
            case .root(let root): old = root.node(at: path)
            case .entries(let nodes): old = nodes[index]
            }
            let new = after.node(at: path)
            // An entry that left its location as it was changes nothing.
            if old == new { continue }
            self.triggers.tree.matches(path, old: old, new: new) { trigger, location, nodes in
                if seen?.insert(Firing(id: trigger.id, location: location)).inserted == false { return }
                firings.append((trigger, location, nodes))
            }
        }
        for (trigger, location, nodes) in firings where !trigger.removed.load(ordering: .acquiring) {
            let old: Node
            if let nodes {
                old = nodes.old
            } else if case .root(let root) = before {
                // Above an entry: the whole tree before the write was kept.
                old = root.node(at: location)
            } else {
                continue
            }
            let new = nodes?.new ?? after.node(at: location)
            guard trigger.kind.accepts(before: !old.isEmpty, after: !new.isEmpty), let database = trigger.database else { continue }
            let path = DatabasePath(location)
            let event = TriggerEvent(
                before: DataSnapshot(node: old, path: path, database: database),
                after: DataSnapshot(node: new, path: path, database: database),
                params: trigger.pattern.params(at: location), depth: depth)
            let outer = self.triggers.handlerDepth
            self.triggers.handlerDepth = depth
            do {
                try trigger.handler(event)
            } catch {
                self.triggers.report(
                    DatabaseError(
                        .userCodeFailed, "The trigger on \"\(trigger.pattern.string)\" threw for the write at \(path.string): \(error)"))
            }
            self.triggers.handlerDepth = outer
        }
    }

    /// Refuses a write a trigger made past ``TriggerState/maxDepth``.
    func refuseTooDeep(_ write: WriteOperation, completion: (@Sendable (DatabaseError?) -> Void)?) {
        let error = DatabaseError(
            .triggerDepthExceeded,
            "A write to \(write.path.string) made by a trigger was refused: it would be \(self.triggers.depth) triggers deep, past the limit of \(self.triggers.maxDepth) (Database.Configuration.maxTriggerDepth). Nothing of it was written; triggers whose writes fire each other without end hit this limit."
        )
        completion?(error)
        self.triggers.report(error)
    }

    /// Registers a trigger (on the loop, in order with the calling thread's writes).
    func addTrigger(_ entry: TriggerEntry) -> Bool {
        self.perform { [self] in
            guard !entry.removed.load(ordering: .acquiring) else { return }
            self.triggers.tree.add(entry)
        }
    }

    private struct Firing: Hashable {
        var id: UInt64
        var location: [ChildKey]
    }
}
