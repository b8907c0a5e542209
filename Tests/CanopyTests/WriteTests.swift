import Canopy
import Foundation
import Testing

/// Collects values from callbacks that run on the draining (test) thread.
private final class Collector<Value> {
    var items: [Value] = []
}

/// The current data at `ref` (export format), read through the loop.
private func current(_ ref: DatabaseReference, _ db: Database) -> JSONValue {
    let box = Collector<JSONValue>()
    ref.getData { _, snapshot in box.items.append(snapshot?.exportJSON ?? .null) }
    db.drain()
    return box.items.first ?? .null
}

/// The current snapshot at `ref`.
private func snapshot(_ ref: DatabaseReference, _ db: Database) -> DataSnapshot? {
    let box = Collector<DataSnapshot>()
    ref.getData { _, snapshot in if let snapshot { box.items.append(snapshot) } }
    db.drain()
    return box.items.first
}

/// The `DatabaseError` that `body` throws, or `nil`.
private func thrown(_ body: () throws -> Void) -> DatabaseError? {
    do {
        try body()
        return nil
    } catch let error as DatabaseError {
        return error
    } catch {
        Issue.record("unexpected error type: \(error)")
        return nil
    }
}

/// Records every `.value` event at `ref` as JSON (export format).
private func recordValues(_ ref: DatabaseReference) -> Collector<JSONValue> {
    let box = Collector<JSONValue>()
    ref.observe(.value) { box.items.append($0.exportJSON) }
    return box
}

private let priorityRules = "must be a valid Firebase priority (a string, finite number, server value, or null)."

@Suite("Writes")
final class WriteTests: ManualDatabaseSuite {
    // MARK: - Invalid multi-path updates

    static let invalidUpdates: [[String: String]] = [
        ["/": "t", "a": "t"], ["a": "t", "a/b": "t"], ["/a": "t", "a/b": "t"], ["/a/b": "t", "a": "t"],
        ["/a/b/.priority": "t", "/a/b": "t"], ["/a/b/.sv": "timestamp"], ["/a/b/.value": "t"], ["/a": "t", "a/": "t"],
    ]

    @Test("invalid multi-path updates throw and write nothing", arguments: invalidUpdates)
    func invalidMultiPathUpdatesThrowAndWriteNothing(update: [String: String]) throws {
        let ref = db.reference()
        try ref.queueSetValue(["keep": 1])
        db.drain()
        let error = thrown { try ref.queueUpdateChildValues(update) }
        #expect(error != nil)
        #expect(error?.code == .invalidPath || error?.code == .invalidKey)
        // The completion-block form reports the same error, on the loop.
        let box = Collector<(any Error)?>()
        ref.updateChildValues(update) { error, _ in box.items.append(error) }
        db.drain()
        #expect(box.items.count == 1)
        #expect((box.items.first ?? nil) as? DatabaseError == error)
        #expect(current(ref, db) == ["keep": 1])
    }

    @Test("overlap and key messages follow the JS client")
    func overlapAndKeyMessagesFollowJSClient() throws {
        let ref = db.reference()
        #expect(
            thrown { try ref.queueUpdateChildValues(["a": "t", "a/b": "t"]) }
                == DatabaseError(.invalidPath, "update failed: values argument contains a path /a that is ancestor of another path /a/b"))
        #expect(
            thrown { try ref.queueUpdateChildValues(["/a/b": "t", "a": "t"]) }?.message
                == "update failed: values argument contains a path /a that is ancestor of another path /a/b")
        #expect(
            thrown { try ref.queueUpdateChildValues(["/a": 1, "a/": 2]) }?.message
                == "update failed: values argument contains a path /a that is ancestor of another path /a")
        #expect(
            thrown { try ref.child("x").queueUpdateChildValues(["a": "t", "a/b": "t"]) }?.message
                == "update failed: values argument contains a path /a that is ancestor of another path /a/b")
        #expect(
            thrown { try ref.queueUpdateChildValues(["a/.sv": "timestamp"]) }
                == DatabaseError(
                    .invalidKey,
                    "update failed: values argument contains an invalid key (.sv) in path /a/.sv. Keys must be non-empty strings and can't contain \".\", \"#\", \"$\", \"/\", \"[\", or \"]\""
                ))
        #expect(
            thrown { try ref.queueUpdateChildValues(["a/.priority": true]) }
                == DatabaseError(
                    .invalidPriority, "update failed: values argument contains an invalid value for '/a/.priority', which \(priorityRules)")
        )
        #expect(
            thrown { try ref.queueUpdateChildValues(["/a/b/.priority": ["x": "y"]]) }
                == DatabaseError(
                    .invalidPriority,
                    "update failed: values argument contains an invalid value for '/a/b/.priority', which \(priorityRules)"))
        #expect(thrown { try ref.queueUpdateChildValues([4: "hi"]) }?.code == .invalidKey)
    }

    // MARK: - Invalid keys, paths, values and priorities

    static let invalidKeys = [".test", "test.", "fo$o", "[what", "ever]", "ha#sh", "/thing", "th/ing", "thing/", ""]

    @Test("invalid keys in set values throw .invalidKey and write nothing", arguments: invalidKeys)
    func invalidKeysInSetValuesThrow(key: String) throws {
        let ref = db.reference().child("data")
        try ref.queueSetValue("before")
        db.drain()
        for value in [[key: "test"], ["deeper": [key: "test"]]] as [[String: Any]] {
            #expect(thrown { try ref.queueSetValue(value) }?.code == .invalidKey)
            #expect(thrown { try ref.queueSetValue(value, andPriority: 1) }?.code == .invalidKey)
            #expect(thrown { try ref.queueUpdateChildValues(["x": value]) }?.code == .invalidKey)
            let box = Collector<(any Error)?>()
            ref.setValue(value) { error, _ in box.items.append(error) }
            db.drain()
            #expect(((box.items.first ?? nil) as? DatabaseError)?.code == .invalidKey)
        }
        #expect(current(ref, db) == "before")
    }

    @Test(
        "references to invalid paths exist but their writes throw .invalidPath",
        arguments: [".foo", "foo/.foo", ".keys", ".length", "a.b", "a#", "$x", "[", "]", ""])
    func invalidPathWritesThrow(path: String) throws {
        let ref = db.reference().child(path)
        for error in [
            thrown { try ref.queueSetValue("x") }, thrown { try ref.queueSetValue("x", andPriority: 1) },
            thrown { try ref.queueSetPriority(1) },
            thrown { try ref.queueRemoveValue() }, thrown { try ref.queueUpdateChildValues(["a": 1]) },
        ] {
            #expect(error?.code == .invalidPath)
            #expect(
                error?.message
                    == "child failed: path argument was an invalid path = \"\(path)\". Paths must be non-empty strings and can't contain \".\", \"#\", \"$\", \"[\", or \"]\""
            )
        }
        #expect(throws: DatabaseError.self) { try db.reference().validatedChild(path) }
        db.drain()
        #expect(current(db.reference(), db) == .null)
    }

    @Test("unsupported types, NaN and non-string keys throw .invalidValue / .invalidKey")
    func unsupportedValuesThrow() throws {
        let ref = db.reference().child("v")
        try ref.queueSetValue(["intact": true])
        db.drain()
        let date = thrown { try ref.queueSetValue(Date()) }
        #expect(date?.code == .invalidValue)
        #expect(date?.message.contains("Date") == true)
        #expect(thrown { try ref.queueSetValue(["nested": ["when": Date()]]) }?.message.contains("at /v/nested/when") == true)
        #expect(thrown { try ref.queueSetValue(["invalid": "data", ".sv": "timestamp"]) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue([".value": [String: Any]()]) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue([".value": 1, "child": 2]) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue(Double.nan) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue(Double.nan) }?.message.hasPrefix("set failed: value argument contains NaN") == true)
        #expect(thrown { try ref.queueSetValue(["x": Double.infinity]) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue(Float.nan) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue(NSNumber(value: Double.nan)) }?.code == .invalidValue)
        #expect(thrown { try ref.queueSetValue([4: "hi"] as [AnyHashable: Any]) }?.code == .invalidKey)
        #expect(thrown { try ref.queueSetValue(["ok": [4: "hi"] as [AnyHashable: Any]]) }?.code == .invalidKey)
        #expect(thrown { try ref.queueSetValue(NSObject()) }?.code == .invalidValue)
        db.drain()
        #expect(current(ref, db) == ["intact": true])
    }

    static let invalidPriorities = [
        ("{}", "setWithPriority failed: priority argument \(priorityRules)"),
        ("[]", "setWithPriority failed: priority argument \(priorityRules)"),
        ("true", "setWithPriority failed: priority argument \(priorityRules)"),
        ("object", "setWithPriority failed: priority argument \(priorityRules)"),
    ]
    static let nonFinitePriorities = [
        ("NaN", "setWithPriority failed: priority argument is NaN, but \(priorityRules)"),
        ("Infinity", "setWithPriority failed: priority argument \(priorityRules)"),
    ]

    @Test("invalid priorities throw .invalidPriority", arguments: invalidPriorities)
    func invalidPrioritiesThrow(name: String, message: String) throws {
        try self.checkInvalidPriority(name: name, message: message)
    }

    @Test(
        "NaN and Infinity priorities throw .invalidPriority with the JS message",
        arguments: nonFinitePriorities
    )
    func nonFinitePrioritiesThrowWithJSMessage(name: String, message: String) throws {
        try self.checkInvalidPriority(name: name, message: message)
    }

    @Test("NaN and Infinity priorities are rejected and write nothing", arguments: nonFinitePriorities)
    func nonFinitePrioritiesWriteNothing(name: String, message: String) throws {
        let ref = db.reference().child("p")
        try ref.queueSetValue("v", andPriority: 1)
        db.drain()
        let priority = name == "NaN" ? Double.nan : Double.infinity
        #expect(thrown { try ref.queueSetValue("x", andPriority: priority) } != nil)
        #expect(thrown { try ref.queueSetPriority(priority) } != nil)
        #expect(thrown { try ref.queueUpdateChildValues([".priority": priority]) } != nil)
        db.drain()
        #expect(current(ref, db) == [".value": "v", ".priority": 1])
    }

    @Test(
        "NaN and Infinity values name the full property path, location included"
    )
    func nonFiniteValueMessages() throws {
        let ref = db.reference().child("v")
        #expect(
            thrown { try ref.queueSetValue(Double.nan) }
                == DatabaseError(.invalidValue, "set failed: value argument contains NaN at /v"))
        #expect(
            thrown { try ref.queueSetValue(["x": Double.infinity]) }
                == DatabaseError(.invalidValue, "set failed: value argument contains Infinity at /v/x"))
        #expect(
            thrown { try ref.child("w").queueSetValue(["p": ["q": Double.nan]]) }
                == DatabaseError(.invalidValue, "set failed: value argument contains NaN at /v/w/p/q"))
        #expect(
            thrown { try ref.queueUpdateChildValues(["a": Double.nan]) }
                == DatabaseError(.invalidValue, "update failed: values argument contains NaN at /v/a"))
    }

    private func checkInvalidPriority(name: String, message: String) throws {
        let priority: Any
        switch name {
        case "NaN": priority = Double.nan
        case "{}": priority = [String: Any]()
        case "[]": priority = [Any]()
        case "true": priority = true
        case "Infinity": priority = Double.infinity
        default: priority = ["a": 1]
        }
        let ref = db.reference().child("p")
        try ref.queueSetValue("v", andPriority: 1)
        db.drain()
        let error = thrown { try ref.queueSetValue("x", andPriority: priority) }
        #expect(error == DatabaseError(.invalidPriority, message))
        #expect(thrown { try ref.queueSetPriority(priority) }?.code == .invalidPriority)
        #expect(thrown { try ref.queueSetValue(["a": 1, ".priority": priority]) } != nil)
        db.drain()
        #expect(current(ref, db) == [".value": "v", ".priority": 1])
    }

    @Test("nil and NSNull delete; .info references exist but cannot be written")
    func nilDeletesAndInfoIsReadOnly() throws {
        let root = db.reference()
        try root.child("a").queueSetValue(1)
        try root.child("b").queueSetValue(2)
        db.drain()
        #expect(thrown { try root.child("a").queueSetValue(nil) } == nil)
        #expect(thrown { try root.child("b").queueSetValue(NSNull()) } == nil)
        db.drain()
        #expect(current(root, db) == .null)

        let info = root.child(".info")
        #expect(info.key == ".info")
        #expect(thrown { _ = try root.validatedChild(".info") } == nil)
        #expect(thrown { _ = try root.validatedChild(".info/connected") } == nil)
        for ref in [info, info.child("connected"), root.child(".info/serverTimeOffset")] {
            #expect(thrown { try ref.queueSetValue(true) } == DatabaseError(.invalidPath, "set failed = Can't modify data under /.info/"))
            #expect(thrown { try ref.queueRemoveValue() }?.code == .invalidPath)
            #expect(thrown { try ref.queueUpdateChildValues(["x": 1]) }?.code == .invalidPath)
            #expect(thrown { try ref.queueSetPriority(1) }?.code == .invalidPath)
            #expect(thrown { try ref.queueSetValue(1, andPriority: 1) }?.code == .invalidPath)
        }
        #expect(thrown { try root.child("x").child(".info").queueSetValue(1) }?.code == .invalidPath)
        #expect(thrown { try root.child("foo/.info").queueSetValue(1) }?.code == .invalidPath)
    }

    // MARK: - Depth, path length and string size limits

    @Test("depth, path length and string size limits through the library")
    func depthPathLengthAndStringSizeLimits() throws {
        let root = db.reference()
        func nested(_ depth: Int) -> Any {
            var value: Any = true
            for i in stride(from: depth - 1, through: 0, by: -1) { value = ["k\(i)": value] }
            return value
        }
        #expect(thrown { try root.queueSetValue(nested(32)) } == nil)
        let deep = thrown { try root.queueSetValue(nested(33)) }
        #expect(deep?.code == .invalidValue)
        #expect(
            deep?.message.hasPrefix(
                "set failed: value argument path specified exceeds the maximum depth that can be written (32) or object contains a cycle at /k0/k1/"
            ) == true)
        #expect(thrown { try root.child("a/b").queueSetValue(nested(30)) } == nil)
        #expect(thrown { try root.child("a/b").queueSetValue(nested(31)) }?.code == .invalidValue)
        // A reference deeper than 32 is fine; writing there is not.
        let deepRef = root.child((0..<40).map { "d\($0)" }.joined(separator: "/"))
        #expect(deepRef.key == "d39")
        #expect(thrown { try deepRef.queueSetValue(1) }?.code == .invalidValue)

        #expect(thrown { try root.queueSetValue([String(repeating: "k", count: 767): 1]) } == nil)
        #expect(
            thrown { try root.queueSetValue([String(repeating: "k", count: 768): 1]) }
                == DatabaseError(.invalidValue, "set failed: value argument has a key path longer than 768 bytes (769)."))
        #expect(thrown { try root.child(String(repeating: "k", count: 768)).queueSetValue(1) }?.code == .invalidValue)

        let limit = 10_485_760
        #expect(thrown { try root.child("s").queueSetValue(String(repeating: "x", count: limit)) } == nil)
        let big = thrown { try root.child("s").queueSetValue(String(repeating: "x", count: limit + 1)) }
        #expect(big?.code == .invalidValue)
        #expect(
            big?.message.hasPrefix("set failed: value argument contains a string greater than 10485760 utf8 bytes at /s") == true)
        db.drain()
        let stored = snapshot(root.child("s"), db)
        #expect((stored?.value as? String)?.utf8.count == limit)
    }

    // MARK: - Server values

    @Test("increments resolve against the current value; one value event per write")
    func incrementsResolveAgainstCurrentValue() throws {
        let ref = db.reference().child("counter")
        let values = recordValues(ref)
        db.drain()
        try ref.queueSetValue(ServerValue.increment(1))
        try ref.queueSetValue(5)
        try ref.queueSetValue(ServerValue.increment(1))
        try ref.queueSetValue("hello")
        try ref.queueSetValue(ServerValue.increment(1))
        try ref.queueSetValue(["hello": "world"])
        try ref.queueSetValue(ServerValue.increment(1))
        try ref.queueSetValue(true)
        try ref.queueSetValue(ServerValue.increment(NSNumber(value: 2.5)))
        try ref.queueSetValue(ServerValue.increment(NSNumber(value: 1)))
        db.drain()
        #expect(values.items == [.null, 1, 5, 6, "hello", 1, ["hello": "world"], 1, true, 2.5, 3.5])
    }

    @Test("sparse updates resolve each entry at its own path")
    func sparseUpdateIncrementsResolvePerPath() throws {
        let ref = db.reference().child("data")
        let values = recordValues(ref)
        db.drain()
        #expect(values.items == [.null])
        try ref.queueUpdateChildValues(["child/increment": ServerValue.increment(1), "literal": 5])
        db.drain()
        #expect(values.items == [.null, ["literal": 5, "child": ["increment": 1]]])
        try ref.queueUpdateChildValues(["child/increment": ServerValue.increment(41)])
        db.drain()
        #expect(values.items == [.null, ["literal": 5, "child": ["increment": 1]], ["literal": 5, "child": ["increment": 42]]])
    }

    @Test("100 concurrent increments from many tasks add up to 100")
    func concurrentIncrementsAddUp() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "races/count")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask { try await ref.setValue(ServerValue.increment(1)) }
            }
            try await group.waitForAll()
        }
        let snapshot = try await ref.getData()
        #expect(snapshot.json == 100)
        #expect((snapshot.value as? NSNumber)?.int64Value == 100)
    }

    @Test("increments as priorities resolve against the current priority")
    func incrementPrioritiesResolveAgainstCurrentPriority() throws {
        let ref = db.reference().child("p")
        try ref.queueSetValue(0, andPriority: ServerValue.increment(1))
        db.drain()
        #expect(current(ref, db) == [".value": 0, ".priority": 1])
        try ref.queueSetValue(0, andPriority: ServerValue.increment(NSNumber(value: 1.5)))
        db.drain()
        #expect(current(ref, db) == [".value": 0, ".priority": 2.5])
        // A server value as the value keeps the priority given with it.
        try ref.queueSetValue(ServerValue.increment(10), andPriority: "keep")
        db.drain()
        #expect(current(ref, db) == [".value": 10, ".priority": "keep"])
    }

    @Test(
        "setPriority and .priority update entries with an increment add to the current priority"
    )
    func incrementPriorityInPlace() throws {
        let ref = db.reference().child("p")
        try ref.queueSetValue(5, andPriority: 10)
        db.drain()
        try ref.queueSetPriority(ServerValue.increment(1))
        db.drain()
        #expect(current(ref, db) == [".value": 5, ".priority": 11])
        try db.reference().queueUpdateChildValues(["p/.priority": ServerValue.increment(2)])
        db.drain()
        #expect(current(ref, db) == [".value": 5, ".priority": 13])
    }

    @Test("timestamps resolve to the clock, once per write")
    func timestampsResolveOncePerWrite() throws {
        let ref = db.reference().child("ts")
        try ref.queueSetValue(ServerValue.timestamp())
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        db.drain()
        let value = try #require(snapshot(ref, db)?.value as? NSNumber)
        #expect(abs(value.int64Value - before) < 1000)
        try ref.queueUpdateChildValues(["a": ServerValue.timestamp(), "b": ServerValue.timestamp(), "c/d": ServerValue.timestamp()])
        db.drain()
        let both = try #require(snapshot(ref, db)?.json)
        #expect(both["a"] != nil)
        #expect(both["a"] == both["b"])
        #expect(both["c"]?["d"] == both["a"])

        let fixed = try manualDatabase(clock: 1_700_000_000_123)
        defer { fixed.close() }
        try fixed.reference().queueSetValue(
            ["t": ServerValue.timestamp(), "n": ["deep": ServerValue.timestamp()]] as [String: Any], andPriority: ServerValue.timestamp())
        fixed.drain()
        #expect(
            current(fixed.reference(), fixed) == ["t": 1_700_000_000_123, "n": ["deep": 1_700_000_000_123], ".priority": 1_700_000_000_123])
    }

    // MARK: - Empty updates, removals of missing data, priorities

    @Test("an empty update completes with no error and raises no events")
    func emptyUpdateSucceedsSilently() throws {
        let ref = db.reference().child("e")
        try ref.queueSetValue(["x": 1])
        let values = recordValues(ref)
        db.drain()
        #expect(values.items.count == 1)
        let completions = Collector<(any Error)?>()
        ref.updateChildValues([:]) { error, _ in completions.items.append(error) }
        try ref.queueUpdateChildValues([:])
        db.drain()
        #expect(completions.items.count == 1)
        #expect(completions.items.allSatisfy { $0 == nil })
        #expect(values.items == [["x": 1]])
    }

    @Test("removing missing data twice completes without error")
    func removingMissingDataSucceeds() throws {
        let ref = db.reference().child("missing/deeper")
        let completions = Collector<(any Error)?>()
        ref.removeValue { error, r in
            completions.items.append(error)
            #expect(r == ref)
        }
        ref.removeValue { error, _ in completions.items.append(error) }
        db.drain()
        #expect(completions.items.count == 2)
        #expect(completions.items.allSatisfy { $0 == nil })
    }

    @Test("priority getter types")
    func priorityGetterTypes() throws {
        let ref = db.reference().child("node")
        let priorities = Collector<Any?>()
        ref.observe(.value) { priorities.items.append($0.priority) }
        db.drain()
        try ref.queueSetValue("a")
        try ref.queueSetValue("b", andPriority: 5)
        try ref.queueSetValue("c", andPriority: "6")
        try ref.queueSetValue("d", andPriority: 7)
        try ref.queueSetValue([".value": "e", ".priority": 8] as [String: Any])
        try ref.queueSetValue([".value": "f", ".priority": "8"])
        try ref.queueSetValue([".value": "e", ".priority": NSNull()] as [String: Any])
        db.drain()
        let seen = priorities.items
        #expect(seen.count == 8)
        guard seen.count == 8 else { return }
        #expect(seen[0] is NSNull)  // initial null
        #expect(seen[1] is NSNull)
        #expect((seen[2] as? NSNumber)?.intValue == 5)
        #expect(seen[3] as? String == "6")
        #expect(!(seen[3] is NSNumber))
        #expect((seen[4] as? NSNumber)?.intValue == 7)
        #expect(!(seen[4] is String))
        #expect((seen[5] as? NSNumber)?.intValue == 8)
        #expect(seen[6] as? String == "8")
        #expect(seen[7] is NSNull)
    }

    @Test("priority entries of updates")
    func priorityEntriesOfUpdates() throws {
        let root = db.reference()
        try root.queueSetValue(["child-1": 1])
        try root.queueUpdateChildValues(["child-3/.priority": "p"])
        db.drain()
        #expect(current(root, db) == ["child-1": 1])

        try root.queueSetValue(nil)
        try root.queueUpdateChildValues(["foo/.priority": "p", "foo/child": "leaf"])
        db.drain()
        #expect(current(root, db) == ["foo": ["child": "leaf", ".priority": "p"]])

        try root.queueUpdateChildValues([".priority": 3])
        db.drain()
        #expect(current(root, db) == ["foo": ["child": "leaf", ".priority": "p"], ".priority": 3])
        try root.queueSetValue("foo")
        db.drain()
        #expect(current(root, db) == "foo")

        try root.queueSetValue(["foo": "x"])
        try root.queueUpdateChildValues(["foo/.priority": "p"])
        db.drain()
        #expect(current(root, db) == ["foo": [".value": "x", ".priority": "p"]])
        try root.child("foo").queueSetValue("bar")
        db.drain()
        #expect(current(root, db) == ["foo": "bar"])
    }

    // MARK: - setPriority, atomic updates, deletes

    @Test("setPriority on a missing location completes with .writeFailed and changes nothing")
    func setPriorityMissing() throws {
        let root = db.reference()
        try root.child("other").queueSetValue(1)
        let values = recordValues(root)
        db.drain()
        let completions = Collector<(any Error)?>()
        root.child("missing").setPriority(5) { error, _ in completions.items.append(error) }
        try root.child("missing").queueSetPriority(6)
        db.drain()
        #expect(completions.items.count == 1)
        #expect(((completions.items.first ?? nil) as? DatabaseError)?.code == .writeFailed)
        #expect(values.items == [["other": 1]])
        #expect(current(root, db) == ["other": 1])
        // On existing data it works and can be removed again.
        root.child("other").setPriority(5) { error, _ in completions.items.append(error) }
        db.drain()
        #expect(completions.items.count == 2 && completions.items[1] == nil)
        #expect(current(root, db) == ["other": [".value": 1, ".priority": 5]])
        try root.child("other").queueSetPriority(nil)
        db.drain()
        #expect(current(root, db) == ["other": 1])
    }

    @Test("setPriority, async form, on a missing location throws .writeFailed")
    func setPriorityMissingAsync() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        await #expect(throws: DatabaseError.self) { try await db.reference(withPath: "nothing").setPriority(1) }
        do {
            try await db.reference(withPath: "nothing").setPriority(1)
        } catch let error as DatabaseError {
            #expect(error.code == .writeFailed)
        }
        #expect(try await db.reference().getData().exists() == false)
    }

    @Test("a multi-path update with one invalid entry writes nothing")
    func atomicUpdate() throws {
        let root = db.reference()
        try root.queueSetValue(["a": 1, "b": 2])
        let values = recordValues(root)
        db.drain()
        let bad: [[AnyHashable: Any]] = [
            ["a": 10, "b": Double.nan], ["a": 10, "c/.priority": true], ["a": 10, "c": ["x.y": 1]], ["a": 10, "c": Date()],
            ["a": 10, "b/c": 1, "b": 3], ["a": 10, "c$": 1],
        ]
        for update in bad {
            #expect(thrown { try root.queueUpdateChildValues(update) } != nil, "\(update)")
        }
        db.drain()
        #expect(current(root, db) == ["a": 1, "b": 2])
        #expect(values.items.count == 1)
    }

    @Test("updateChildValues overwrites each path, deletes with NSNull, leaves siblings, one event")
    func updateSemantics() throws {
        let root = db.reference()
        try root.queueSetValue(["a": ["x": 1, "y": 2], "b": ["c": 1, "d": 2], "e": 5, "z": 9] as [String: Any])
        let values = recordValues(root)
        db.drain()
        try root.queueUpdateChildValues(["a": ["x": 3], "b/c": NSNull(), "e": NSNull(), "/n//m/": 7])
        db.drain()
        #expect(current(root, db) == ["a": ["x": 3], "b": ["d": 2], "n": ["m": 7], "z": 9])
        #expect(values.items.count == 2)
        // Deleting the last child through an update removes the emptied parent.
        try root.queueUpdateChildValues(["b/d": NSNull(), "n/m": NSNull()])
        db.drain()
        #expect(current(root, db) == ["a": ["x": 3], "z": 9])
        #expect(values.items.count == 3)
    }

    @Test(
        "a nil inside a Swift [Any?] or [String: Any?] value is a null"
    )
    func optionalMembers() throws {
        let ref = db.reference().child("o")
        let value: [String: Any?] = ["a": 1, "b": nil]
        #expect(thrown { try ref.queueSetValue(value) } == nil)
        #expect(thrown { try ref.child("list").queueSetValue(["a", nil, "c"] as [Any?]) } == nil)
        db.drain()
        #expect(current(ref, db) == ["a": 1, "list": ["0": "a", "2": "c"]])
    }

    // MARK: - Arrays and numbers

    @Test("arrays are stored under integer keys and read back as arrays")
    func arraysStoredUnderIntegerKeys() throws {
        let ref = db.reference().child("list")
        let words = ["bob", "and", "becky", "seem", "really", "nice", "yeah?"]
        try ref.queueSetValue(words)
        db.drain()
        let snap = try #require(snapshot(ref, db))
        #expect(snap.value as? [String] == words)
        #expect(snap.childrenCount == 7)
        #expect(snap.childSnapshot(forPath: "6").value as? String == "yeah?")
        #expect(
            snap.valueInExportFormat() as? [String: String]
                == Dictionary(uniqueKeysWithValues: words.enumerated().map { (String($0.offset), $0.element) }))
    }

    @Test("numeric keys become arrays only when dense enough")
    func numericKeysBecomeArraysOnlyWhenDense() throws {
        let root = db.reference()
        for (i, name) in ["alpha", "bravo", "charlie", "delta", "echo"].enumerated() {
            try root.child("dense").child(String(i)).queueSetValue(name)
        }
        try root.child("big").child("100003354884401").queueSetValue("alpha")
        try root.child("sparse").child("3024").queueSetValue(5)
        db.drain()
        #expect(snapshot(root.child("dense"), db)?.value as? [String] == ["alpha", "bravo", "charlie", "delta", "echo"])
        #expect((snapshot(root.child("big"), db)?.value as? [String: Any])?["100003354884401"] as? String == "alpha")
        #expect(snapshot(root.child("big"), db)?.value is [String: Any])
        #expect(snapshot(root.child("sparse"), db)?.value is [String: Any])
        #expect(snapshot(root.child("sparse"), db)?.json == ["3024": 5])
    }

    @Test("holes are NSNull, null elements are not stored, export never gives arrays")
    func arrayHolesAndExportFormat() throws {
        let root = db.reference()
        try root.child("holes").queueSetValue(["a", NSNull(), "c"] as [Any])
        try root.child("one").queueSetValue(["1": "a"])
        try root.child("two").queueSetValue(["2": "a"])
        try root.child("pair").queueSetValue(["a", "b"])
        db.drain()
        for name in ["holes"] {
            let snap = try #require(snapshot(root.child(name), db))
            #expect(snap.childrenCount == 2)
            #expect(snap.hasChild("0") && !snap.hasChild("1") && snap.hasChild("2"))
            let array = try #require(snap.value as? [Any])
            #expect(array.count == 3)
            #expect(array[0] as? String == "a" && array[1] is NSNull && array[2] as? String == "c")
            #expect(snap.json == ["a", .null, "c"])
        }
        #expect(snapshot(root.child("one"), db)?.json == [.null, "a"])
        #expect(snapshot(root.child("two"), db)?.json == ["2": "a"])
        #expect(snapshot(root.child("pair"), db)?.valueInExportFormat() as? [String: String] == ["0": "a", "1": "b"])
        #expect(snapshot(root.child("pair"), db)?.exportJSON == ["0": "a", "1": "b"])
    }

    @Test("Int64 values round-trip exactly, and 1 == 1.0 raises no event")
    func int64Fidelity() throws {
        let root = db.reference()
        let twoPow53Plus1: Int64 = 9_007_199_254_740_993
        try root.child("max").queueSetValue(Int64.max)
        try root.child("min").queueSetValue(Int64.min)
        try root.child("big").queueSetValue(twoPow53Plus1)
        try root.child("nsnumber").queueSetValue(NSNumber(value: twoPow53Plus1))
        try root.child("dbl").queueSetValue(Double.greatestFiniteMagnitude)
        try root.child("uint").queueSetValue(UInt64.max)
        db.drain()
        for (name, expected) in [("max", Int64.max), ("min", Int64.min), ("big", twoPow53Plus1), ("nsnumber", twoPow53Plus1)] {
            let snap = try #require(snapshot(root.child(name), db))
            #expect((snap.value as? NSNumber)?.int64Value == expected, "\(name)")
            #expect(snap.value as? Int64 == expected, "\(name)")
            #expect(snap.json == .int(expected), "\(name)")
            if case .int(let i) = snap.json {
                #expect(i == expected)
            } else {
                Issue.record("\(name) is not stored as an integer: \(snap.json)")
            }
        }
        #expect((snapshot(root.child("dbl"), db)?.value as? NSNumber)?.doubleValue == Double.greatestFiniteMagnitude)
        #expect(snapshot(root.child("uint"), db)?.json == .double(18_446_744_073_709_551_615.0))

        let ref = root.child("n")
        let values = recordValues(ref)
        db.drain()
        try ref.queueSetValue(1)
        try ref.queueSetValue(1.0)
        try ref.queueSetValue(NSNumber(value: 1))
        try ref.queueSetValue(1.1)
        db.drain()
        #expect(values.items == [.null, 1, 1.1])
    }

    @Test("Swift and Foundation scalar types are stored with their kind (bool, integer, double, string)")
    func foundationInputs() throws {
        let ref = db.reference().child("types")
        let inputs: [(String, Any, JSONValue)] = [
            ("int", 42, .int(42)), ("int32", Int32(-7), .int(-7)), ("uint8", UInt8(255), .int(255)),
            ("uint64", UInt64(1) << 40, .int(1 << 40)), ("double", 2.5, .double(2.5)), ("float", Float(0.5), .double(0.5)),
            ("bool", true, .bool(true)), ("nsbool", NSNumber(value: false), .bool(false)),
            ("nsint", NSNumber(value: Int64(-3)), .int(-3)), ("nsdouble", NSNumber(value: 0.25), .double(0.25)),
            ("string", "s", .string("s")), ("substring", "abc".dropFirst(), .string("bc")),
            ("json", JSONValue.object(["k": .array([.int(1), .null, .bool(true)])]), ["k": ["0": 1, "2": true]]),
            ("decimal", Decimal(string: "1.5")!, .double(1.5)),
        ]
        for (key, value, _) in inputs { try ref.child(key).queueSetValue(value) }
        db.drain()
        let stored = current(ref, db)
        for (key, _, expected) in inputs {
            let actual = stored[key]
            #expect(actual == expected, "\(key)")
            // Kinds, not just values: booleans are not numbers, integers are not doubles.
            switch (actual, expected) {
            case (.bool, .bool), (.int, .int), (.double, .double), (.string, .string), (.object, .object): break
            default: Issue.record("\(key): stored as \(String(describing: actual)), expected the kind of \(expected)")
            }
        }
        // Booleans stay distinct from 0/1 in the value the API returns.
        let snap = try #require(snapshot(ref.child("bool"), db))
        #expect(snap.value as? Bool == true)
        let int = try #require(snapshot(ref.child("int"), db))
        #expect((int.value as? NSNumber)?.intValue == 42)
        #expect(int.value as? Bool == nil)
    }

    @Test("JSONValue forms of server values work like the dictionary forms")
    func serverValueJSONForms() throws {
        let db = try manualDatabase(clock: 5_000)
        defer { db.close() }
        let ref = db.reference().child("sv")
        try ref.queueSetValue(
            ["t": ServerValue.timestampValue, "i": ServerValue.incrementValue(Int64(2)), "d": ServerValue.incrementValue(0.5)] as JSONValue)
        db.drain()
        #expect(current(ref, db) == ["t": 5_000, "i": 2, "d": 0.5])
        try ref.queueUpdateChildValues(["i": ServerValue.incrementValue(Int64(3)), "d": ServerValue.increment(NSNumber(value: 1))])
        db.drain()
        #expect(current(ref, db) == ["t": 5_000, "i": 5, "d": 1.5])
    }

    @Test("snapshot.value as? [String: Any] and member casts work like Firebase's")
    func foundationValues() throws {
        let ref = db.reference().child("posts/p1")
        try ref.queueSetValue(["title": "Hello", "starCount": 42, "ratio": 0.5, "published": true, "stars": ["u1": true]] as [String: Any])
        db.drain()
        let post = try #require(snapshot(ref, db)?.value as? [String: Any])
        #expect(post["starCount"] as? Int == 42)
        #expect(post["title"] as? String == "Hello")
        #expect(post["ratio"] as? Double == 0.5)
        #expect(post["published"] as? Bool == true)
        #expect((post["stars"] as? [String: Any])?["u1"] as? Bool == true)
    }

    @Test("every rejected write leaves earlier data intact")
    func rejectedWritesKeepData() throws {
        let root = db.reference()
        let initial: JSONValue = ["users": ["ada": ["name": "Ada", ".priority": 1]], "n": 5]
        try root.queueSetValue(initial.anyValue)
        db.drain()
        let attempts: [() throws -> Void] = [
            { try root.queueSetValue(["users": ["a.b": 1]]) },
            { try root.child("users").queueSetValue(Double.nan) },
            { try root.child("users/ada").queueSetValue("x", andPriority: true) },
            { try root.child("users/ada").queueSetPriority([1, 2]) },
            { try root.queueUpdateChildValues(["users/ada": 1, "users/ada/name": 2]) },
            { try root.queueUpdateChildValues(["n": 6, "bad#": 1]) },
            { try root.child("a.b").queueSetValue(1) },
            { try root.child(".info").queueSetValue(1) },
            { try root.queueSetValue(["x": Date()]) },
            { try root.queueSetValue([".value": 1, "x": 2]) },
            { try root.queueSetValue(["x": [".sv": "bogus"]]) },
        ]
        for (i, attempt) in attempts.enumerated() {
            #expect(thrown(attempt) != nil, "attempt \(i) should throw")
            db.drain()
            #expect(current(root, db) == initial, "after attempt \(i)")
        }
    }

    @Test("the three forms of each write agree")
    func writeForms() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "forms")
        try await ref.child("a").setValue(1)
        try await ref.child("b").setValue(2, andPriority: "p")
        try await ref.child("a").setPriority(3)
        try await ref.updateChildValues(["c": 4, "d/e": 5])
        try await ref.child("c").removeValue()
        let result = try await ref.getData()
        #expect(result.exportJSON == ["a": [".value": 1, ".priority": 3], "b": [".value": 2, ".priority": "p"], "d": ["e": 5]])
        await #expect(throws: DatabaseError.self) { try await ref.child("x").setValue(["bad/key": 1]) }
        await #expect(throws: DatabaseError.self) { try await ref.updateChildValues(["a": 1, "a/b": 2]) }
        let unchanged = try await ref.getData()
        #expect(unchanged.exportJSON == result.exportJSON)

        let done = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
            ref.child("f").setValue(6) { error, _ in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: true) }
            }
        }
        #expect(done)
        #expect(try await ref.child("f").getData().json == 6)
    }
}
