import Canopy
import CanopyCore
import CanopyRules
import CanopyServer
import Dispatch

// B12: B1a, B2a and B10 judged by the blog's rules (``BlogRules``) against the same with none.
// In process, each write is one loop job, as the server runs it: with rules,
// `NamespaceRules.permitted` then `apply`; without, `apply` alone.

/// Whether a B12 scenario's writes are judged by the blog's rules.
enum RulesMode: String, CaseIterable, Sendable {
    case norules
    case rules
}

/// The B12 scenarios (appended to `scenarios` in main.swift).
let rulesScenarios: [Scenario] =
    RulesMode.allCases.map { mode in
        Scenario(name: "B12.push.\(mode.rawValue)", stores: [.memory, .journal]) { try rulesPush(mode, $0) }
    }
    + RulesMode.allCases.map { mode in
        Scenario(name: "B12.window.\(mode.rawValue)", stores: [.memory, .journal]) { try rulesWindow(mode, $0) }
    }
    + RulesMode.allCases.map { mode in
        Scenario(name: "B12.http.writes.\(mode.rawValue)", stores: [.memory, .journal]) { try rulesHTTPWrites(mode, $0) }
    }

/// A database of a B12 scenario and the writer that applies its writes on the loop, judged by
/// the blog's rules or not.
final class RuledDatabase {
    let db: Database
    let rules: NamespaceRules?
    /// The completions of ``write(_:as:)``; a refused write completes with an error.
    let completions = CompletionCounter()
    private let directory: BenchDirectory?

    /// A database in memory (`.memory`) or a durable one syncing every 100 ms, as B1a's journal
    /// variant (`.journal`).
    init(_ store: Store, _ mode: RulesMode) throws {
        switch store {
        case .memory:
            self.directory = nil
            self.db = try Database.inMemory()
        case .journal:
            let directory = try BenchDirectory("b12")
            self.directory = directory
            self.db = try openDurable(directory.databasePath, .periodic(.milliseconds(100)))
        }
        self.rules = mode == .rules ? try NamespaceRules(source: BlogRules.source) : nil
    }

    func close() {
        self.db.close()
        self.directory?.remove()
    }

    /// Applies `write` by `user` in one loop job, after the rules allowed it (when there are rules).
    func write(_ write: WriteOperation, as user: AuthContext) {
        let completions = self.completions
        if let rules = self.rules {
            self.db.onLoop { access in
                guard let permitted = rules.permitted(write, auth: user, access: access) else {
                    completions.complete(BenchError("the rules refused the write at \(write.path.string) by \(user.uid ?? "nobody")"))
                    return
                }
                access.apply(permitted) { completions.complete($0) }
            }
        } else {
            self.db.onLoop { access in access.apply(write) { completions.complete($0) } }
        }
    }

    /// The data at `path`, read on the loop after every job queued before (so after every write
    /// issued so far).
    func node(at path: DatabasePath) -> Node {
        let box = NodeBox()
        let done = DispatchSemaphore(value: 0)
        self.db.onLoop { access in
            box.node = access.node(at: path)
            done.signal()
        }
        done.wait()
        return box.node
    }

    /// Applies `value` at `path` without rules (the data a scenario starts with) and waits for it.
    func load(_ path: String, _ value: JSONValue) throws {
        let keys = path.split(separator: "/").map(String.init)
        var converter = try ValueConverter(function: "set", location: keys)
        let write = WriteOperation.set(DatabasePath(keys.map { ChildKey($0) }), try converter.convert(value))
        let loaded = CompletionCounter()
        self.db.write(write) { loaded.complete($0) }
        loaded.wait(for: 1)
        if let error = loaded.firstError { throw BenchError("loading \(path) failed: \(error)") }
    }
}

/// A node read on the loop, handed to the waiting thread.
private final class NodeBox: @unchecked Sendable {  // written before the signal, read after the wait
    var node: Node = .empty
}
