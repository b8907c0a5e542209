import Canopy
import CanopyCore
import CanopyRules
import HTTPTypes
import Hummingbird
import Synchronization

/// `POST /.settings/rules/simulate.json`: may this read or write happen? Judged by the
/// namespace's rules (or a draft document) against its current data, as a given user or signed
/// out; nothing is written (the console's rules playground, `canopy rules test` on a server).
///
/// The body is a JSON object: `operation` (`"read"`, `"set"` or `"update"`), `path`, `data` (the
/// value of a set; the child paths and values of an update), `auth` (the user's token claims with
/// `sub`, or `null` for signed out) and optionally `rules` (a rules document to try instead of the
/// one in force). The answer: `{"allowed": …, "rule": {…} or null, "reason": …}`, where `rule` is
/// the `.read`/`.write` that granted or the `.validate` that failed.
extension CanopyResponder {
    func simulateRules(_ request: inout Request, method: HTTPRequest.Method, namespace: Namespace) async throws(RESTError) -> Response {
        guard method == .post else {
            throw RESTError(.methodNotAllowed, "Method \(method) is not supported for the rules simulator; use POST.")
        }
        guard case .object(let body) = try WriteBodies.json(try await self.body(&request)) else {
            throw .badRequest(
                "The rules simulator takes a JSON object: {\"operation\": \"read\", \"path\": \"/users/alice\", \"auth\": {\"sub\": \"alice\"}}."
            )
        }
        let engine: RulesEngine
        switch body["rules"] {
        case nil, .null?: engine = RulesEngine(namespace.rules.withLock { $0 }.engine.document)
        case .string(let source)?:
            do {
                engine = RulesEngine(try RulesDocument(parsing: source))
            } catch {
                throw .badRequest(error.report)
            }
        default: throw .badRequest("rules must be a rules document (a string), or absent for the rules in force.")
        }
        guard case .string(let pathText)? = body["path"] else { throw .badRequest("path must be a location, such as \"/users/alice\".") }
        let path = try Self.simulatedPath(pathText)
        let auth = try Self.simulatedAuth(body["auth"])
        let operation: SimulatedOperation
        switch body["operation"] {
        case .string("read")?: operation = .read
        case .string("set")?:
            do {
                operation = .set(try ValueConverter.writeValue(body["data"] ?? .null, at: path.keys, function: "set"))
            } catch {
                throw RESTError(error)
            }
        case .string("update")?:
            guard case .object(let members)? = body["data"] else {
                throw .badRequest("data of an update must be an object of child paths and values.")
            }
            do {
                operation = .update(try UpdateEntries.entries(members, location: path.keys, function: "update"))
            } catch {
                throw RESTError(error)
            }
        default: throw .badRequest("operation must be \"read\", \"set\" or \"update\".")
        }
        let verdict: RuleVerdict = try await namespace.database.loop { access in
            let root = access.root
            let now = access.now()
            switch operation {
            case .read:
                return engine.canRead(path: path, auth: auth, root: root, query: nil, now: now)
            case .set(let value):
                let write = WriteOperation.set(path, value).resolved(root: root, now: now)
                return engine.canWrite(changes: write.ruleChanges(root: root), auth: auth, root: root, now: now)
            case .update(let entries):
                let write = WriteOperation(path: path, entries: entries).resolved(root: root, now: now)
                return engine.canWrite(changes: write.ruleChanges(root: root), auth: auth, root: root, now: now)
            }
        }
        return JSONBody.response(Self.json(verdict))
    }

    private enum SimulatedOperation {
        case read
        case set(WriteValue)
        case update([WriteOperation.Entry])
    }

    private static func simulatedPath(_ text: String) throws(RESTError) -> DatabasePath {
        var keys: [ChildKey] = []
        for segment in text.split(separator: "/", omittingEmptySubsequences: true) {
            guard KeyValidation.isValidKey(String(segment)) else {
                throw .badRequest(
                    "Invalid path \"\(text)\": keys must be non-empty and can't contain \".\", \"#\", \"$\", \"[\", \"]\" or control characters."
                )
            }
            keys.append(ChildKey(String(segment)))
        }
        return DatabasePath(keys)
    }

    /// `auth`: the claims of a signed-in user (`sub` is `auth.uid`), or `null` / absent: signed out.
    private static func simulatedAuth(_ value: JSONValue?) throws(RESTError) -> AuthContext? {
        guard let value, !value.isNull else { return nil }
        guard case .object(let claims) = value, case .string(let sub)? = claims["sub"], !sub.isEmpty else {
            throw .badRequest(
                "auth must be null (signed out) or the user's token claims, an object with a non-empty \"sub\" (the uid), such as {\"sub\": \"alice\"}."
            )
        }
        return AuthContext(uid: sub, token: claims)
    }

    /// `{"allowed": …, "rule": {"rule", "location", "expression", "line", "column"} or null, "reason": …}`.
    private static func json(_ verdict: RuleVerdict) -> [UInt8] {
        var out = Array(#"{"allowed":"#.utf8) + Array((verdict.isAllowed ? "true" : "false").utf8)
        out += Array(#","rule":"#.utf8)
        if let rule = verdict.decidingRule {
            out += Array(#"{"rule":"#.utf8)
            JSONWriter.appendString((rule.rulePath.hasSuffix("/") ? rule.rulePath : rule.rulePath + "/") + rule.kind.rawValue, to: &out)
            out += Array(#","location":"#.utf8)
            JSONWriter.appendString(rule.location.description, to: &out)
            out += Array(#","expression":"#.utf8)
            JSONWriter.appendString(rule.expression, to: &out)
            out += Array(#","line":\#(rule.line),"column":\#(rule.column)}"#.utf8)
        } else {
            out += Array("null".utf8)
        }
        out += Array(#","reason":"#.utf8)
        JSONWriter.appendString(verdict.reason, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
