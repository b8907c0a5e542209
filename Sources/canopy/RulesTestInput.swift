import Canopy
import CanopyCore
import CanopyRules

/// The inputs of `canopy rules test` turned into what the rules engine takes; each mistake is a
/// usage error that names its option.
enum RulesTestInput {
    /// `auth`: the claims of `--auth` (their `sub` is `auth.uid`), `--uid U` as the claims
    /// `{"sub": U}`, or neither (signed out, `auth == null`).
    static func auth(claims: String?, uid: String?) throws(CLIError) -> AuthContext? {
        if let uid {
            if uid.isEmpty { throw .usage("--uid: the uid is empty.") }
            return AuthContext(uid: uid, token: ["sub": .string(uid)])
        }
        guard let claims else { return nil }
        let json = try self.naming("--auth") { () throws(CLIError) in try parseJSON(Array(claims.utf8)) }
        guard case .object(let members) = json, case .string(let sub)? = members["sub"], !sub.isEmpty else {
            throw .usage(
                "--auth takes the token's claims, a JSON object with a non-empty \"sub\" (the uid), for example {\"sub\": \"alice\", \"email\": \"alice@example.com\"}."
            )
        }
        return AuthContext(uid: sub, token: members)
    }

    /// The database of `--root` (export format accepted, server values resolved at `now`);
    /// empty without one.
    static func root(_ bytes: [UInt8]?, now: Int64) throws(CLIError) -> Node {
        guard let bytes else { return .empty }
        let write = try self.naming("--root") { () throws(CLIError) in try LocalDatabase.setOperation(bytes, at: .root, function: "import")
        }
        return write.entries[0].value.resolved(against: .empty, now: now)
    }

    /// The value of `--data` for a set at `path`, validated as `canopy set` validates it, with its
    /// server values resolved against `root` at `now`.
    static func setValue(_ bytes: [UInt8], at path: DatabasePath, root: Node, now: Int64) throws(CLIError) -> Node {
        let write = try self.naming("--data") { () throws(CLIError) in try LocalDatabase.setOperation(bytes, at: path, function: "set") }
        return write.resolvedNode(ofEntry: 0, root: root, now: now)
    }

    /// The changes of `--data` for a multi-path update at `path`, validated as `canopy update`
    /// validates it, resolved and split into changes as the server judges them (a priority as a
    /// change of the node that gets it).
    static func updateChanges(_ bytes: [UInt8], at path: DatabasePath, root: Node, now: Int64) throws(CLIError) -> [RulesEngine.Change] {
        let write = try self.naming("--data") { () throws(CLIError) in try LocalDatabase.updateOperation(bytes, at: path) }
        return write.resolved(root: root, now: now).ruleChanges(root: root)
    }

    /// What `query.*` shows for the query flags; `nil` (a plain read) without any.
    static func query(_ options: QueryOptions) throws(CLIError) -> QueryDescription? {
        if options.isEmpty { return nil }
        let db: Database
        do {
            var configuration = Database.Configuration()
            configuration.loopMode = .manual
            db = try Database.inMemory(configuration)
        } catch {
            throw CLIError.from(error)
        }
        defer { db.close() }
        return QueryDescription(try options.apply(to: db.reference()).params)
    }

    /// `body`, its usage errors prefixed with `option` (`--data: Invalid JSON at …`).
    static func naming<T>(_ option: String, _ body: () throws(CLIError) -> T) throws(CLIError) -> T {
        do {
            return try body()
        } catch {
            throw CLIError(message: "\(option): \(error.message)", exit: error.exit)
        }
    }
}
