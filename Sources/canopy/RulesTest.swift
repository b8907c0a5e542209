import ArgumentParser
import Canopy
import CanopyCore
import CanopyRules
import Foundation

/// `canopy rules test`: judges one read or write against a rules file, offline, and says which
/// rule decided (the console's rules playground).
struct RulesTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Test a read or write against a rules file, offline, and print which rule allowed or denied it.",
        discussion: """
            Nothing is read from or sent to a server: the request is judged against --root (default: \
            an empty database) at --now. Prints ALLOWED or DENIED, then the deciding rule: the .read \
            or .write that granted access, or the .validate that failed (none when no rule granted \
            access). --update judges the members of --data (child paths and values) as one write, \
            as Firebase judges a multi-path update; server values ({".sv": "timestamp"}) become --now. \
            --auth takes a user's token claims: sub is auth.uid, the claims are auth.token; --uid U \
            stands for the claims {"sub": U}; with neither the request is signed out (auth == null).

            Exit status: 0 allowed, 1 denied, 64 bad input (the rules file, a path, JSON, a query).

            Examples:
              canopy rules test --rules database.rules.json --read users/alice --uid alice
              canopy rules test --rules database.rules.json --write users/alice --data '{"name": "Alice"}' \\
                --auth '{"sub": "alice", "email": "alice@example.com"}' --trace
              canopy rules test --rules database.rules.json --update / --data-file changes.json --uid alice
              canopy rules test --rules database.rules.json --read posts --uid alice \\
                --order-by-child owner --equal-to '"alice"'
            """
    )

    @Option(help: ArgumentHelp("The rules file (database.rules.json), or - for stdin.", valueName: "FILE"))
    var rules: String

    @Option(help: ArgumentHelp("Test a read of this location (with the query flags: a query).", valueName: "PATH"))
    var read: String?

    @Option(help: ArgumentHelp("Test a set of --data at this location (null: a delete).", valueName: "PATH"))
    var write: String?

    @Option(
        help: ArgumentHelp("Test a multi-path update at this location: --data is an object of child paths and values.", valueName: "PATH"))
    var update: String?

    @Option(help: ArgumentHelp("The JSON written by --write or --update.", valueName: "JSON"))
    var data: String?

    @Option(name: .customLong("data-file"), help: ArgumentHelp("Read the JSON written from a file (- for stdin).", valueName: "FILE"))
    var dataFile: String?

    @Option(help: ArgumentHelp("The signed-in user's token claims, a JSON object with sub (auth.uid).", valueName: "JSON"))
    var auth: String?

    @Option(help: ArgumentHelp("A signed-in user with only this uid (the claims {\"sub\": UID}).", valueName: "UID"))
    var uid: String?

    @Option(help: ArgumentHelp("The database contents the request is judged against, as JSON (default: empty).", valueName: "JSON"))
    var root: String?

    @Option(
        name: .customLong("root-file"), help: ArgumentHelp("Read the database contents from a JSON file (- for stdin).", valueName: "FILE"))
    var rootFile: String?

    @Option(help: ArgumentHelp("The server time (now) in milliseconds since 1970 (default: the current time).", valueName: "MS"))
    var now: Int64?

    @Flag(help: "Also print every rule evaluated, in order, with its outcome.")
    var trace = false

    @OptionGroup(title: "Query (of a --read)") var query: QueryOptions

    func validate() throws {
        let operations = [self.read, self.write, self.update].compactMap { $0 }
        if operations.count != 1 { throw ValidationError("Give one of --read PATH, --write PATH and --update PATH.") }
        let writes = self.read == nil
        if self.data != nil && self.dataFile != nil {
            throw ValidationError("Give the data either with --data or with --data-file, not both.")
        }
        if writes && self.data == nil && self.dataFile == nil {
            throw ValidationError("--write and --update need the data written: --data JSON or --data-file FILE.")
        }
        if !writes && (self.data != nil || self.dataFile != nil) { throw ValidationError("--read takes no --data.") }
        if writes && !self.query.isEmpty { throw ValidationError("The query flags go with --read.") }
        if self.auth != nil && self.uid != nil { throw ValidationError("Give either --auth or --uid, not both.") }
        if self.root != nil && self.rootFile != nil {
            throw ValidationError("Give the database either with --root or with --root-file, not both.")
        }
        if [self.rules, self.dataFile, self.rootFile].filter({ $0 == "-" }).count > 1 {
            throw ValidationError("Only one of --rules, --data-file and --root-file can read stdin (-).")
        }
    }

    func run() async throws {
        let rules = try RulesFile(self.rules)
        let now = self.now ?? Int64(Date().timeIntervalSince1970 * 1000)
        let auth = try RulesTestInput.auth(claims: self.auth, uid: self.uid)
        let root = try RulesTestInput.root(try self.rootBytes(), now: now)
        let engine = RulesEngine(rules.document)
        let verdict: RuleVerdict
        let request: String
        if let read = self.read {
            let path = try parsePath(read)
            verdict = engine.canRead(path: path, auth: auth, root: root, query: try RulesTestInput.query(self.query), now: now)
            request = "read \(path)"
        } else if let write = self.write {
            let path = try parsePath(write)
            let value = try RulesTestInput.setValue(try self.dataBytes(), at: path, root: root, now: now)
            verdict = engine.canWrite(path: path, value: value, auth: auth, root: root, now: now)
            request = "write \(path)"
        } else {
            let path = try parsePath(self.update ?? "")
            let changes = try RulesTestInput.updateChanges(try self.dataBytes(), at: path, root: root, now: now)
            verdict = engine.canWrite(changes: changes, auth: auth, root: root, now: now)
            request = "update \(path) (\(changes.map(\.path.description).joined(separator: ", ")))"
        }
        Output.line(RulesReport.text(verdict, request: request, trace: self.trace))
        if !verdict.isAllowed { throw ExitCode(1) }
    }

    private func dataBytes() throws(CLIError) -> [UInt8] {
        if let file = self.dataFile { return try readInput(file) }
        return Array((self.data ?? "").utf8)
    }

    private func rootBytes() throws(CLIError) -> [UInt8]? {
        if let file = self.rootFile { return try readInput(file) }
        return self.root.map { Array($0.utf8) }
    }
}
