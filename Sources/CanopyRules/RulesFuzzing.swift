import CanopyCore

/// The fuzz entry point for the rules language: parser, static checks and evaluator.
package enum RulesFuzzing {
    /// Parses `bytes` as a rules document and, when it parses, evaluates a few reads and writes.
    /// Returns a description of a broken property, `nil` when all hold. Properties: no crash; an
    /// error's line and column lie within the input; the compiled rules and the tree-walking evaluator
    /// agree (``evaluatorsDisagree(_:auths:data:written:query:now:values:)``); evaluation is deterministic; a read granted
    /// at a path is granted at its children (grants cascade); a write allowed as a set is allowed
    /// again when repeated as a one-key update.
    /// - Complexity: O(*n*) in the input plus a bounded number of evaluations.
    package static func check(_ bytes: [UInt8]) -> String? {
        let text = String(decoding: bytes, as: UTF8.self)
        let document: RulesDocument
        do throws(RulesError) {
            document = try RulesDocument(parsing: text)
        } catch {
            let lines = text.unicodeScalars.reduce(1) { $0 + ($1 == "\n" ? 1 : 0) }
            if error.line < 1 || error.line > lines || error.column < 1 {
                return "error position \(error.line):\(error.column) outside the input (\(lines) lines): \(error)"
            }
            if !error.description.hasPrefix("\(error.line):\(error.column): ") { return "error description lacks its position: \(error)" }
            return nil
        }
        let engine = RulesEngine(document)
        let auths = [nil, AuthContext(uid: "x")]
        let written = [Node.leaf(.string("x")), Node.leaf(.int(1)).setting(.leaf(.string("x")), at: [ChildKey("b")][...])]
        var keys: [[ChildKey]] = [[]]
        // Paths from the document's own literal keys and some wildcard values.
        var node = document.root
        var path: [ChildKey] = []
        for _ in 0..<4 {
            guard let next = node.children.min(by: { $0.key < $1.key }) ?? node.wildcard.map({ ("x", $0) }) else { break }
            path.append(ChildKey(next.key))
            keys.append(path)
            node = next.value
        }
        keys.append([ChildKey("a"), ChildKey("b")])
        let data = Node.leaf(.string("v")).setting(.leaf(.int(1)), at: [ChildKey("a"), ChildKey("n")][...])
        if let failure = Self.evaluatorsDisagree(document, auths: auths, data: data, written: written) { return failure }
        for auth in auths {
            for k in keys {
                let p = DatabasePath(k)
                let read = engine.canRead(path: p, auth: auth, root: data, now: 1)
                if read != engine.canRead(path: p, auth: auth, root: data, now: 1) { return "read of \(p) is not deterministic" }
                if read.isAllowed, !engine.canRead(path: p.appending(ChildKey("child")), auth: auth, root: data, now: 1).isAllowed {
                    return "read of \(p) granted but not of its child"
                }
                let value = Node.leaf(.string("x"))
                let write = engine.canWrite(path: p, value: value, auth: auth, root: data, now: 1)
                if write != engine.canWrite(changes: [.init(path: p, value: value)], auth: auth, root: data, now: 1) {
                    return "write of \(p) is not deterministic"
                }
                _ = engine.canWrite(path: p, value: .empty, auth: auth, root: data, now: 1)
            }
        }
        return nil
    }
}
