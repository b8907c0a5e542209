import Canopy
import Foundation
import Testing

// MARK: - Shared helpers of the query suites (QueryWindowTests, QueryErrorTests, QueryOrderingTests)

/// A synchronous write, for `async` tests on a drain-mode database (where the `async` overload
/// would wait for a loop that nobody drains).
func querySyncSet(_ ref: DatabaseReference, _ value: Any?) throws {
    try ref.queueSetValue(value)
}

/// One callback received by a query observer.
struct QueryEvent: Equatable, CustomStringConvertible {
    var tag: String = ""
    var type: DataEventType
    var key: String?
    var prev: String?
    /// Child events: the child's plain value. Value events: the location's value when it has no
    /// children (a leaf, or `null`), else `null` and the children below.
    var data: JSONValue = .null
    /// Value events: the children's keys in the snapshot's iteration order, and their values.
    var children: [String] = []
    var childValues: [JSONValue] = []

    static func added(_ key: String, _ prev: String?, _ data: JSONValue, tag: String = "") -> QueryEvent {
        QueryEvent(tag: tag, type: .childAdded, key: key, prev: prev, data: data)
    }
    static func removed(_ key: String, _ data: JSONValue, tag: String = "") -> QueryEvent {
        QueryEvent(tag: tag, type: .childRemoved, key: key, prev: nil, data: data)
    }
    static func changed(_ key: String, _ prev: String?, _ data: JSONValue, tag: String = "") -> QueryEvent {
        QueryEvent(tag: tag, type: .childChanged, key: key, prev: prev, data: data)
    }
    static func moved(_ key: String, _ prev: String?, _ data: JSONValue, tag: String = "") -> QueryEvent {
        QueryEvent(tag: tag, type: .childMoved, key: key, prev: prev, data: data)
    }
    /// A value event whose snapshot iterates exactly these children, in this order.
    static func value(_ children: KeyValuePairs<String, JSONValue>, tag: String = "") -> QueryEvent {
        QueryEvent(
            tag: tag, type: .value, key: nil, prev: nil, data: .null, children: children.map(\.key), childValues: children.map(\.value))
    }
    /// A value event of a leaf value (or `null`).
    static func leaf(_ data: JSONValue, tag: String = "") -> QueryEvent {
        QueryEvent(tag: tag, type: .value, key: nil, prev: nil, data: data)
    }
    static func valueNull(tag: String = "") -> QueryEvent { .leaf(.null, tag: tag) }

    /// Value events compare without the key (it is the location's, the same for every event).
    static func == (lhs: QueryEvent, rhs: QueryEvent) -> Bool {
        lhs.tag == rhs.tag && lhs.type == rhs.type && (lhs.type == .value || lhs.key == rhs.key) && lhs.prev == rhs.prev
            && lhs.data == rhs.data && lhs.children == rhs.children && lhs.childValues == rhs.childValues
    }

    var description: String {
        let head = self.tag.isEmpty ? "" : "\(self.tag): "
        switch self.type {
        case .value:
            if self.children.isEmpty { return "\(head)value \(self.data.jsonString())" }
            let body = zip(self.children, self.childValues).map { "\($0):\($1.jsonString())" }.joined(separator: ", ")
            return "\(head)value {\(body)}"
        case .childRemoved:
            return "\(head)removed \(self.key ?? "nil") \(self.data.jsonString())"
        default:
            let name = self.type == .childAdded ? "added" : self.type == .childChanged ? "changed" : "moved"
            return "\(head)\(name) \(self.key ?? "nil") (\(self.prev ?? "null")) \(self.data.jsonString())"
        }
    }
}

/// Collects query callbacks; only touched by the thread that drains the database.
final class QueryEventLog: @unchecked Sendable {
    /// Registration order for "all types": child_added first so that the initial events read
    /// `added…, value`; the other types get no initial events.
    static let allTypes: [DataEventType] = [.childAdded, .childRemoved, .childMoved, .childChanged, .value]

    var events: [QueryEvent] = []
    var cancellations: [String] = []

    func take() -> [QueryEvent] {
        defer { self.events = [] }
        return self.events
    }

    static func record(_ snapshot: DataSnapshot, type: DataEventType, prev: String?, tag: String) -> QueryEvent {
        if type == .value {
            if snapshot.hasChildren() {
                let children = snapshot.childSnapshots
                return QueryEvent(
                    tag: tag, type: .value, key: snapshot.key, prev: prev, data: .null, children: children.map { $0.key ?? "" },
                    childValues: children.map(\.json))
            }
            return QueryEvent(tag: tag, type: .value, key: snapshot.key, prev: prev, data: snapshot.json)
        }
        return QueryEvent(tag: tag, type: type, key: snapshot.key, prev: prev, data: snapshot.json)
    }

    @discardableResult
    func observe(_ query: DatabaseQuery, _ types: [DataEventType] = QueryEventLog.allTypes, tag: String = "") -> [DatabaseHandle] {
        types.map { type in
            query.observe(
                type,
                andPreviousSiblingKeyWith: { [self] snapshot, prev in
                    self.events.append(Self.record(snapshot, type: type, prev: prev, tag: tag))
                },
                withCancel: { [self] error in
                    self.cancellations.append("\(tag) \(type): \(error)")
                })
        }
    }
}

/// The query's current result by `getData`, checked against a one-shot `.value` observer.
func queryRead(_ query: DatabaseQuery, _ db: Database, sourceLocation: SourceLocation = #_sourceLocation) -> DataSnapshot? {
    var fromGet: DataSnapshot?
    var getError: (any Error)?
    var fromObserver: DataSnapshot?
    query.getData { error, snapshot in
        getError = error
        fromGet = snapshot
    }
    query.observeSingleEvent(of: .value) { fromObserver = $0 }
    db.drain()
    #expect(getError == nil, "getData failed: \(String(describing: getError))", sourceLocation: sourceLocation)
    #expect(
        fromGet?.childSnapshots.map(\.key) == fromObserver?.childSnapshots.map(\.key), "getData and observeSingleEvent order",
        sourceLocation: sourceLocation)
    #expect(fromGet?.exportJSON == fromObserver?.exportJSON, "getData and observeSingleEvent data", sourceLocation: sourceLocation)
    return fromGet
}

/// Checks that `query` shows exactly `keys` (in order) three ways: `getData`, the initial
/// `child_added` events of a new observer (with their previous keys), and its initial `value`.
@discardableResult
func expectWindow(_ query: DatabaseQuery, _ db: Database, _ keys: [String], sourceLocation: SourceLocation = #_sourceLocation)
    -> DataSnapshot?
{
    let snapshot = queryRead(query, db, sourceLocation: sourceLocation)
    #expect(snapshot?.childSnapshots.map(\.key) == keys, "getData children", sourceLocation: sourceLocation)
    #expect(snapshot?.exists() == !keys.isEmpty, sourceLocation: sourceLocation)
    let log = QueryEventLog()
    let handles = log.observe(query, [.childAdded, .value])
    db.drain()
    let events = log.take()
    let added = events.filter { $0.type == .childAdded }
    #expect(added.map(\.key) == keys, "initial child_added", sourceLocation: sourceLocation)
    let previous: [String?] = keys.indices.map { $0 == 0 ? nil : keys[$0 - 1] }
    #expect(added.map(\.prev) == previous, "initial child_added previous keys", sourceLocation: sourceLocation)
    #expect(events.last?.type == .value && events.last?.children == keys, "initial value: \(events)", sourceLocation: sourceLocation)
    #expect(log.cancellations.isEmpty, sourceLocation: sourceLocation)
    for handle in handles { query.removeObserver(withHandle: handle) }
    return snapshot
}

/// A query built on a location holding `data`, and the children it must show, in order.
struct QueryWindowCase: Sendable, CustomTestStringConvertible {
    let name: String
    let data: JSONValue
    let keys: [String]
    let build: @Sendable (DatabaseQuery) -> DatabaseQuery
    var testDescription: String { self.name }

    init(_ name: String, _ data: JSONValue, _ keys: [String], _ build: @escaping @Sendable (DatabaseQuery) -> DatabaseQuery) {
        self.name = name
        self.data = data
        self.keys = keys
        self.build = build
    }

    /// Writes the data, checks the window, and that every child shown carries its stored data
    /// (priority included) while the result itself has no priority when filtered.
    func run(sourceLocation: SourceLocation = #_sourceLocation) throws {
        let (db, ref) = try manualDatabase(holding: self.data, at: "list")
        defer { db.close() }
        let snapshot = expectWindow(self.build(ref), db, self.keys, sourceLocation: sourceLocation)
        for child in snapshot?.childSnapshots ?? [] {
            #expect(child.exportJSON == self.data[child.key ?? ""], "child \(child.key ?? "")", sourceLocation: sourceLocation)
        }
    }
}

// MARK: - Query windows: ranges, limits and their live events

@Suite("Query windows, ranges and live limits")
final class QueryWindowTests: ManualDatabaseSuite {
    // MARK: Limit windows with live writes

    @Test("limitToLast(2) pushes out the first child when a later one is added")
    func limitToLastPushesOutFirstChildOnLaterAdd() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.child("d").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.removed("b", 2), .added("d", "c", 4), .value(["c": 3, "d": 4])])
        #expect(log.cancellations.isEmpty)
    }

    @Test("startAt(nil, childKey: a).limitToFirst(2): an insert inside the full window evicts the last")
    func insertInFullStartAtWindowEvictsLast() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryStarting(atValue: nil, childKey: "a").queryLimited(toFirst: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.added("a", nil, 1), .added("b", "a", 2), .value(["a": 1, "b": 2])])
        try ref.child("aa").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.removed("b", 2), .added("aa", "a", 4), .value(["a": 1, "aa": 4])])
    }

    @Test("startAfter(nil, childKey: a).limitToFirst(2): an insert inside the full window evicts the last")
    func insertInFullStartAfterWindowEvictsLast() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryStarting(afterValue: nil, childKey: "a").queryLimited(toFirst: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.child("aa").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.removed("c", 3), .added("aa", nil, 4), .value(["aa": 4, "b": 2])])
    }

    @Test("a window that is not full only adds", arguments: ["startAt", "startAfter"])
    func windowNotFullOnlyAdds(start: String) throws {
        let ref = db.reference(withPath: "list")
        let base = start == "startAt" ? ref.queryStarting(atValue: nil, childKey: "a") : ref.queryStarting(afterValue: nil, childKey: "a")
        let log = QueryEventLog()
        log.observe(base.queryLimited(toFirst: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue(["c": 3])
        db.drain()
        #expect(log.take() == [.added("c", nil, 3), .value(["c": 3])])
        try ref.child("b").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.added("b", nil, 4), .value(["b": 4, "c": 3])])
    }

    @Test("removing from a limitToLast(2) window with nothing left to pull in only removes")
    func removalWithNothingToPullInOnlyRemoves() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        _ = log.take()
        try ref.queueSetValue(["b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("b", 2), .value(["c": 3])])
        try ref.child("c").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("c", 3), .valueNull()])
    }

    @Test("removals from limitToLast(2) refill the window from below, immediately")
    func removalsRefillLimitToLastFromBelow() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("b", 2), .added("a", nil, 1), .value(["a": 1, "c": 3])])
        try ref.child("c").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("c", 3), .value(["a": 1])])
        try ref.child("a").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("a", 1), .valueNull()])
    }

    @Test("limitToLast(2) on existing {a,b,c}: initial events are the window, then removals refill")
    func section73InitialWindow() throws {
        let ref = try self.reference(holding: ["a": 1, "b": 2, "c": 3], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("b", 2), .added("a", nil, 1), .value(["a": 1, "c": 3])])
    }

    @Test("previous keys are relative to the limitToLast(2) window")
    func previousKeysAreRelativeToWindow() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.child("a").queueSetValue(1)
        db.drain()
        #expect(log.take() == [.added("a", nil, 1), .value(["a": 1])])
        try ref.child("c").queueSetValue(3)
        db.drain()
        #expect(log.take() == [.added("c", "a", 3), .value(["a": 1, "c": 3])])
        try ref.child("b").queueSetValue(2)
        db.drain()
        #expect(log.take() == [.removed("a", 1), .added("b", nil, 2), .value(["b": 2, "c": 3])])
        try ref.child("d").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.removed("b", 2), .added("d", "c", 4), .value(["c": 3, "d": 4])])
    }

    @Test("priority moves inside, out of and into a limitToLast(2) window")
    func priorityMovesInsideOutOfAndIntoWindow() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            [
                "a": [".value": "a", ".priority": 10], "b": [".value": "b", ".priority": 20],
                "c": [".value": "c", ".priority": 30], "d": [".value": "d", ".priority": 40],
            ] as JSONValue)
        db.drain()
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.added("c", nil, "c"), .added("d", "c", "d"), .value(["c": "c", "d": "d"])])
        try ref.child("c").queueSetPriority(50)
        db.drain()
        #expect(log.take() == [.moved("c", "d", "c"), .changed("c", "d", "c"), .value(["d": "d", "c": "c"])])
        try ref.child("c").queueSetPriority(35)
        db.drain()
        #expect(log.take() == [.moved("c", nil, "c"), .changed("c", nil, "c"), .value(["c": "c", "d": "d"])])
        try ref.child("b").queueSetPriority(33)
        db.drain()
        #expect(log.take() == [], "b stays outside the window")
        try ref.child("b").queueSetPriority(60)
        db.drain()
        #expect(log.take() == [.removed("c", "c"), .added("b", "d", "b"), .value(["d": "d", "b": "b"])])
    }

    @Test("numeric priorities: a move to the end of a limitToLast(2) window")
    func numericPriorityMoveToWindowEnd() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            [
                "a": [".value": "a", ".priority": 1], "b": [".value": "b", ".priority": 2],
                "c": [".value": "c", ".priority": 3], "d": [".value": "d", ".priority": 4],
            ] as JSONValue)
        db.drain()
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2), [.childMoved, .childChanged, .value])
        db.drain()
        #expect(log.take() == [.value(["c": "c", "d": "d"])])
        try ref.child("c").queueSetPriority(10)
        db.drain()
        #expect(log.take() == [.moved("c", "d", "c"), .changed("c", "d", "c"), .value(["d": "d", "c": "c"])])
    }

    @Test("limitToLast(2) with pushes of 0…4")
    func limitToLastWithPushes() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue([String: Any]())
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2), [.childAdded, .childRemoved])
        db.drain()
        #expect(log.take() == [])
        var keys: [String] = []
        for i in 0..<5 {
            let child = ref.childByAutoId()
            keys.append(child.key!)
            try child.queueSetValue(i)
        }
        db.drain()
        #expect(keys == keys.sorted(), "push IDs increase")
        let k = keys
        #expect(
            log.take() == [
                .added(k[0], nil, 0), .added(k[1], k[0], 1), .removed(k[0], 0), .added(k[2], k[1], 2),
                .removed(k[1], 1), .added(k[3], k[2], 3), .removed(k[2], 2), .added(k[4], k[3], 4),
            ])
    }

    @Test("limitToLast(5) keeps only the last five of ten pushes")
    func limitToLastKeepsLastFiveOfTenPushes() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 5), [.value])
        db.drain()
        for i in 0..<10 { try ref.childByAutoId().queueSetValue(i) }
        db.drain()
        let events = log.take()
        #expect(events.count == 11)
        #expect(events.last?.childValues == [5, 6, 7, 8, 9])
        #expect(queryRead(ref.queryLimited(toLast: 5), db)?.childSnapshots.map(\.json) == [5, 6, 7, 8, 9])
    }

    // MARK: Resulting windows of limits and ranges

    static let abc: JSONValue = ["a": 1, "b": 2, "c": 3]
    static let abcd: JSONValue = ["a": 1, "b": 2, "c": 3, "d": 4]

    @Test(
        "windows of various limits",
        arguments: [
            QueryWindowCase("limitToLast(1)", abc, ["c"]) { $0.queryLimited(toLast: 1) },
            QueryWindowCase("endAt().limitToLast(1)", abc, ["c"]) { $0.queryEnding(atValue: nil).queryLimited(toLast: 1) },
            QueryWindowCase("limitToLast(2)", abc, ["b", "c"]) { $0.queryLimited(toLast: 2) },
            QueryWindowCase("limitToLast(3)", abc, ["a", "b", "c"]) { $0.queryLimited(toLast: 3) },
            QueryWindowCase("limitToLast(4)", abc, ["a", "b", "c"]) { $0.queryLimited(toLast: 4) },
        ])
    func windowsOfVariousLimits(_ c: QueryWindowCase) throws { try c.run() }

    @Test(
        "limits with a startAt key; constraint order is irrelevant",
        arguments: [
            QueryWindowCase("startAt().limitToFirst(1)", abc, ["a"]) { $0.queryStarting(atValue: nil).queryLimited(toFirst: 1) },
            QueryWindowCase("startAt(nil,c).limitToFirst(1)", abc, ["c"]) {
                $0.queryStarting(atValue: nil, childKey: "c").queryLimited(toFirst: 1)
            },
            QueryWindowCase("startAt(nil,b).limitToFirst(1)", abc, ["b"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toFirst: 1)
            },
            QueryWindowCase("startAt(nil,b).limitToFirst(2)", abc, ["b", "c"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toFirst: 2)
            },
            QueryWindowCase("startAt(nil,b).limitToFirst(3)", abc, ["b", "c"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toFirst: 3)
            },
            QueryWindowCase("startAt(nil,b).limitToLast(1)", abc, ["c"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toLast: 1)
            },
            QueryWindowCase("startAt(nil,b).limitToLast(2)", abc, ["b", "c"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toLast: 2)
            },
            QueryWindowCase("startAt(nil,b).limitToLast(3)", abc, ["b", "c"]) {
                $0.queryStarting(atValue: nil, childKey: "b").queryLimited(toLast: 3)
            },
            QueryWindowCase("limitToFirst(1).startAt(nil,c)", abc, ["c"]) {
                $0.queryLimited(toFirst: 1).queryStarting(atValue: nil, childKey: "c")
            },
            QueryWindowCase("limitToFirst(1).startAt(nil,b)", abc, ["b"]) {
                $0.queryLimited(toFirst: 1).queryStarting(atValue: nil, childKey: "b")
            },
            QueryWindowCase("limitToLast(1).startAt(nil,b)", abc, ["c"]) {
                $0.queryLimited(toLast: 1).queryStarting(atValue: nil, childKey: "b")
            },
            QueryWindowCase("limitToLast(3).startAt(nil,b)", abc, ["b", "c"]) {
                $0.queryLimited(toLast: 3).queryStarting(atValue: nil, childKey: "b")
            },
        ])
    func limitsWithStartAtKey(_ c: QueryWindowCase) throws { try c.run() }

    @Test(
        "limits with a startAfter key",
        arguments: [
            QueryWindowCase("startAfter().limitToFirst(1)", abcd, []) { $0.queryStarting(afterValue: nil).queryLimited(toFirst: 1) },
            QueryWindowCase("startAfter(nil,c).limitToFirst(1)", abcd, ["d"]) {
                $0.queryStarting(afterValue: nil, childKey: "c").queryLimited(toFirst: 1)
            },
            QueryWindowCase("startAfter(nil,b).limitToFirst(1)", abcd, ["c"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toFirst: 1)
            },
            QueryWindowCase("startAfter(nil,b).limitToFirst(2)", abcd, ["c", "d"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toFirst: 2)
            },
            QueryWindowCase("startAfter(nil,b).limitToFirst(3)", abcd, ["c", "d"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toFirst: 3)
            },
            QueryWindowCase("startAfter(nil,b).limitToLast(1)", abcd, ["d"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toLast: 1)
            },
            QueryWindowCase("startAfter(nil,b).limitToLast(2)", abcd, ["c", "d"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toLast: 2)
            },
            QueryWindowCase("startAfter(nil,b).limitToLast(3)", abcd, ["c", "d"]) {
                $0.queryStarting(afterValue: nil, childKey: "b").queryLimited(toLast: 3)
            },
        ])
    func limitsWithStartAfterKey(_ c: QueryWindowCase) throws { try c.run() }

    @Test(
        "limits with an endAt key",
        arguments: [
            QueryWindowCase("endAt().limitToFirst(1)", abc, ["a"]) { $0.queryEnding(atValue: nil).queryLimited(toFirst: 1) },
            QueryWindowCase("endAt(nil,c).limitToFirst(1)", abc, ["a"]) {
                $0.queryEnding(atValue: nil, childKey: "c").queryLimited(toFirst: 1)
            },
            QueryWindowCase("endAt(nil,b).limitToFirst(2)", abc, ["a", "b"]) {
                $0.queryEnding(atValue: nil, childKey: "b").queryLimited(toFirst: 2)
            },
            QueryWindowCase("endAt(nil,c).limitToLast(1)", abc, ["c"]) {
                $0.queryEnding(atValue: nil, childKey: "c").queryLimited(toLast: 1)
            },
            QueryWindowCase("endAt(nil,b).limitToLast(1)", abc, ["b"]) {
                $0.queryEnding(atValue: nil, childKey: "b").queryLimited(toLast: 1)
            },
            QueryWindowCase("endAt(nil,b).limitToLast(3)", abc, ["a", "b"]) {
                $0.queryEnding(atValue: nil, childKey: "b").queryLimited(toLast: 3)
            },
        ])
    func limitsWithEndAtKey(_ c: QueryWindowCase) throws { try c.run() }

    static let aToH: JSONValue = ["a": "a", "b": "b", "c": "c", "d": "d", "e": "e", "f": "f", "g": "g", "h": "h"]

    @Test(
        "endAt / endBefore a key with limitToLast(5)",
        arguments: [
            QueryWindowCase("endAt(nil,f).limitToLast(5)", aToH, ["b", "c", "d", "e", "f"]) {
                $0.queryEnding(atValue: nil, childKey: "f").queryLimited(toLast: 5)
            },
            QueryWindowCase("endBefore(nil,f).limitToLast(5)", aToH, ["a", "b", "c", "d", "e"]) {
                $0.queryEnding(beforeValue: nil, childKey: "f").queryLimited(toLast: 5)
            },
        ])
    func endAtAndEndBeforeKeyWithLimit(_ c: QueryWindowCase) throws { try c.run() }

    static let stringPriorities: JSONValue = [
        "a": [".value": 1, ".priority": "z"], "b": [".value": 2, ".priority": "y"],
        "c": [".value": 3, ".priority": "x"], "d": [".value": 4, ".priority": "w"],
    ]

    @Test(
        "ranges over string priorities",
        arguments: [
            QueryWindowCase("startAt(w).endAt(y)", stringPriorities, ["d", "c", "b"]) {
                $0.queryStarting(atValue: "w").queryEnding(atValue: "y")
            },
            QueryWindowCase("startAt(w).endAt(w)", stringPriorities, ["d"]) { $0.queryStarting(atValue: "w").queryEnding(atValue: "w") },
            QueryWindowCase("startAt(a).endAt(c)", stringPriorities, []) { $0.queryStarting(atValue: "a").queryEnding(atValue: "c") },
            QueryWindowCase("startAfter(w).endAt(y)", stringPriorities, ["c", "b"]) {
                $0.queryStarting(afterValue: "w").queryEnding(atValue: "y")
            },
            QueryWindowCase("startAfter(w).endAt(x)", stringPriorities, ["c"]) {
                $0.queryStarting(afterValue: "w").queryEnding(atValue: "x")
            },
            QueryWindowCase("startAt(w).endBefore(y)", stringPriorities, ["d", "c"]) {
                $0.queryStarting(atValue: "w").queryEnding(beforeValue: "y")
            },
            QueryWindowCase("startAt(w).endBefore(x)", stringPriorities, ["d"]) {
                $0.queryStarting(atValue: "w").queryEnding(beforeValue: "x")
            },
            QueryWindowCase("startAfter(w).endBefore(z)", stringPriorities, ["c", "b"]) {
                $0.queryStarting(afterValue: "w").queryEnding(beforeValue: "z")
            },
            QueryWindowCase("startAfter(w).endBefore(y)", stringPriorities, ["c"]) {
                $0.queryStarting(afterValue: "w").queryEnding(beforeValue: "y")
            },
            QueryWindowCase("startAfter(w).endBefore(w)", stringPriorities, []) {
                $0.queryStarting(afterValue: "w").queryEnding(beforeValue: "w")
            },
        ])
    func rangesOverStringPriorities(_ c: QueryWindowCase) throws { try c.run() }

    static let numberPriorities: JSONValue = [
        "a": [".value": 1, ".priority": 1], "b": [".value": 2, ".priority": 1],
        "c": [".value": 3, ".priority": 2], "d": [".value": 4, ".priority": 2],
    ]

    @Test(
        "ranges over priorities and keys",
        arguments: [
            QueryWindowCase("startAt(1,a).endAt(2,d)", numberPriorities, ["a", "b", "c", "d"]) {
                $0.queryStarting(atValue: 1, childKey: "a").queryEnding(atValue: 2, childKey: "d")
            },
            QueryWindowCase("startAt(1,b).endAt(2,c)", numberPriorities, ["b", "c"]) {
                $0.queryStarting(atValue: 1, childKey: "b").queryEnding(atValue: 2, childKey: "c")
            },
            QueryWindowCase("startAt(1,c).endAt(2)", numberPriorities, ["c", "d"]) {
                $0.queryStarting(atValue: 1, childKey: "c").queryEnding(atValue: 2)
            },
            QueryWindowCase("startAfter(1,a).endAt(2,d)", numberPriorities, ["b", "c", "d"]) {
                $0.queryStarting(afterValue: 1, childKey: "a").queryEnding(atValue: 2, childKey: "d")
            },
            QueryWindowCase("startAfter(1,b).endAt(2,c)", numberPriorities, ["c"]) {
                $0.queryStarting(afterValue: 1, childKey: "b").queryEnding(atValue: 2, childKey: "c")
            },
            QueryWindowCase("startAt(1,a).endBefore(2,d)", numberPriorities, ["a", "b", "c"]) {
                $0.queryStarting(atValue: 1, childKey: "a").queryEnding(beforeValue: 2, childKey: "d")
            },
            QueryWindowCase("startAt(1,b).endBefore(2,c)", numberPriorities, ["b"]) {
                $0.queryStarting(atValue: 1, childKey: "b").queryEnding(beforeValue: 2, childKey: "c")
            },
            QueryWindowCase("startAt(1,c).endBefore(2)", numberPriorities, []) {
                $0.queryStarting(atValue: 1, childKey: "c").queryEnding(beforeValue: 2)
            },
            QueryWindowCase("startAfter(1,a).endBefore(2,d)", numberPriorities, ["b", "c"]) {
                $0.queryStarting(afterValue: 1, childKey: "a").queryEnding(beforeValue: 2, childKey: "d")
            },
            QueryWindowCase("startAfter(1,b).endBefore(2,c)", numberPriorities, []) {
                $0.queryStarting(afterValue: 1, childKey: "b").queryEnding(beforeValue: 2, childKey: "c")
            },
        ])
    func rangesOverPrioritiesAndKeys(_ c: QueryWindowCase) throws { try c.run() }

    static let prioritiesAndNames2: JSONValue = [
        "c": [".value": 3, ".priority": 1], "d": [".value": 4, ".priority": 1],
        "a": [".value": 1, ".priority": 2], "b": [".value": 2, ".priority": 2],
    ]

    @Test(
        "ranges over priorities and keys, second set",
        arguments: [
            QueryWindowCase("startAt(1,c).endAt(2,b)", prioritiesAndNames2, ["c", "d", "a", "b"]) {
                $0.queryStarting(atValue: 1, childKey: "c").queryEnding(atValue: 2, childKey: "b")
            },
            QueryWindowCase("startAt(1,d).endAt(2,a)", prioritiesAndNames2, ["d", "a"]) {
                $0.queryStarting(atValue: 1, childKey: "d").queryEnding(atValue: 2, childKey: "a")
            },
            QueryWindowCase("startAt(1,e).endAt(2)", prioritiesAndNames2, ["a", "b"]) {
                $0.queryStarting(atValue: 1, childKey: "e").queryEnding(atValue: 2)
            },
            QueryWindowCase("startAfter(1,c).endAt(2,b)", prioritiesAndNames2, ["d", "a", "b"]) {
                $0.queryStarting(afterValue: 1, childKey: "c").queryEnding(atValue: 2, childKey: "b")
            },
            QueryWindowCase("startAt(1,c).endBefore(2,b)", prioritiesAndNames2, ["c", "d", "a"]) {
                $0.queryStarting(atValue: 1, childKey: "c").queryEnding(beforeValue: 2, childKey: "b")
            },
            QueryWindowCase("startAfter(1,c).endBefore(2,b)", prioritiesAndNames2, ["d", "a"]) {
                $0.queryStarting(afterValue: 1, childKey: "c").queryEnding(beforeValue: 2, childKey: "b")
            },
            QueryWindowCase("startAfter(1,d).endAt(2,a)", prioritiesAndNames2, ["a"]) {
                $0.queryStarting(afterValue: 1, childKey: "d").queryEnding(atValue: 2, childKey: "a")
            },
            QueryWindowCase("startAfter(1,d).endBefore(2,a)", prioritiesAndNames2, []) {
                $0.queryStarting(afterValue: 1, childKey: "d").queryEnding(beforeValue: 2, childKey: "a")
            },
        ])
    func moreRangesOverPrioritiesAndKeys(_ c: QueryWindowCase) throws { try c.run() }

    static let nullPrioritiesStringC: JSONValue = [
        "a": 0, "b": 1, "c": [".value": 2, ".priority": "2"], "d": [".value": 3, ".priority": 3], "e": [".value": 4, ".priority": "hi"],
    ]
    static let nullPrioritiesNumberC: JSONValue = [
        "a": 0, "b": 1, "c": [".value": 2, ".priority": 2], "d": [".value": 3, ".priority": 3], "e": [".value": 4, ".priority": "hi"],
    ]

    @Test(
        "null priorities in ranges",
        arguments: [
            QueryWindowCase("startAt(nil).endAt(nil), c:'2'", nullPrioritiesStringC, ["a", "b"]) {
                $0.queryStarting(atValue: nil).queryEnding(atValue: nil)
            },
            QueryWindowCase("startAt(nil).endAt(nil), c:2", nullPrioritiesNumberC, ["a", "b"]) {
                $0.queryStarting(atValue: nil).queryEnding(atValue: nil)
            },
            QueryWindowCase("startAfter(nil).endAt(nil)", nullPrioritiesStringC, []) {
                $0.queryStarting(afterValue: nil).queryEnding(atValue: nil)
            },
            QueryWindowCase("endAt(2)", nullPrioritiesNumberC, ["a", "b", "c"]) { $0.queryEnding(atValue: 2) },
            QueryWindowCase("endBefore(2)", nullPrioritiesNumberC, ["a", "b"]) { $0.queryEnding(beforeValue: 2) },
            QueryWindowCase("startAt(2)", nullPrioritiesNumberC, ["c", "d", "e"]) { $0.queryStarting(atValue: 2) },
            QueryWindowCase("startAfter(2)", nullPrioritiesNumberC, ["d", "e"]) { $0.queryStarting(afterValue: 2) },
            QueryWindowCase("startAfter(nil) (string c)", nullPrioritiesStringC, ["d", "c", "e"]) { $0.queryStarting(afterValue: nil) },
        ])
    func nullPrioritiesInRanges(_ c: QueryWindowCase) throws { try c.run() }

    static let equalToData: JSONValue = ["a": 1, "b": [".priority": 2, ".value": 2], "c": [".priority": "3", ".value": 3]]

    @Test(
        "equalTo on priorities, with and without a key",
        arguments: [
            QueryWindowCase("equalTo(2)", equalToData, ["b"]) { $0.queryEqual(toValue: 2) },
            QueryWindowCase("equalTo('3', c)", equalToData, ["c"]) { $0.queryEqual(toValue: "3", childKey: "c") },
            QueryWindowCase("equalTo(nil, c)", equalToData, []) { $0.queryEqual(toValue: nil, childKey: "c") },
            QueryWindowCase("equalTo(nil)", equalToData, ["a"]) { $0.queryEqual(toValue: nil) },
            QueryWindowCase("equalTo(nil, a)", equalToData, ["a"]) { $0.queryEqual(toValue: nil, childKey: "a") },
        ])
    func equalToOnPriorities(_ c: QueryWindowCase) throws { try c.run() }

    @Test("equalTo(2) exports the child with its priority")
    func equalToExportsChildWithPriority() throws {
        let ref = try self.reference(holding: Self.equalToData, at: "list")
        #expect(queryRead(ref.queryEqual(toValue: 2), db)?.exportJSON == ["b": [".priority": 2, ".value": 2]])
        #expect(queryRead(ref.queryEqual(toValue: "3", childKey: "c"), db)?.exportJSON == ["c": [".priority": "3", ".value": 3]])
        #expect(queryRead(ref.queryEqual(toValue: nil, childKey: "c"), db)?.exportJSON == .null)
    }

    static let nuggetValues: JSONValue = ["alex": 60, "rob": 56, "vassili": 55.5, "tony": 52, "greg": 52]

    @Test(
        "startAt/startAfter/endAt/endBefore on the value index, with a key",
        arguments: [
            QueryWindowCase("startAt(52,tony).endAt(59)", nuggetValues, ["tony", "vassili", "rob"]) {
                $0.queryOrderedByValue().queryStarting(atValue: 52, childKey: "tony").queryEnding(atValue: 59)
            },
            QueryWindowCase("startAfter(52,tony).endAt(59)", nuggetValues, ["vassili", "rob"]) {
                $0.queryOrderedByValue().queryStarting(afterValue: 52, childKey: "tony").queryEnding(atValue: 59)
            },
            QueryWindowCase("startAt(52,tony).endBefore(60)", nuggetValues, ["tony", "vassili", "rob"]) {
                $0.queryOrderedByValue().queryStarting(atValue: 52, childKey: "tony").queryEnding(beforeValue: 60)
            },
            QueryWindowCase("startAfter(52,tony).endBefore(60)", nuggetValues, ["vassili", "rob"]) {
                $0.queryOrderedByValue().queryStarting(afterValue: 52, childKey: "tony").queryEnding(beforeValue: 60)
            },
            QueryWindowCase("startAt(52).endAt(56)", nuggetValues, ["greg", "tony", "vassili", "rob"]) {
                $0.queryOrderedByValue().queryStarting(atValue: 52).queryEnding(atValue: 56)
            },
            QueryWindowCase("startAfter(52)", nuggetValues, ["vassili", "rob", "alex"]) {
                $0.queryOrderedByValue().queryStarting(afterValue: 52)
            },
            QueryWindowCase("equalTo(52)", nuggetValues, ["greg", "tony"]) { $0.queryOrderedByValue().queryEqual(toValue: 52) },
            QueryWindowCase("equalTo(55.5)", nuggetValues, ["vassili"]) { $0.queryOrderedByValue().queryEqual(toValue: 55.5) },
        ])
    func valueIndexBoundsWithKey(_ c: QueryWindowCase) throws { try c.run() }

    static let integerKeys: JSONValue = ["1": true, "50": true, "550": true, "6": true, "600": true, "70": true, "8": true, "80": true]
    static let integerKeysAndA: JSONValue = [
        "1": true, "50": true, "550": true, "6": true, "600": true, "70": true, "8": true, "80": true, "a": true,
    ]

    @Test(
        "integer keys behave numerically in key arguments of the default index",
        arguments: [
            QueryWindowCase("startAt(nil,80)", integerKeys, ["80", "550", "600"]) { $0.queryStarting(atValue: nil, childKey: "80") },
            QueryWindowCase("startAt(nil,80) with a", integerKeysAndA, ["80", "550", "600", "a"]) {
                $0.queryStarting(atValue: nil, childKey: "80")
            },
            QueryWindowCase("endAt(nil,50)", integerKeys, ["1", "6", "8", "50"]) { $0.queryEnding(atValue: nil, childKey: "50") },
            QueryWindowCase("startAt(nil,50).endAt(nil,80)", integerKeys, ["50", "70", "80"]) {
                $0.queryStarting(atValue: nil, childKey: "50").queryEnding(atValue: nil, childKey: "80")
            },
            QueryWindowCase("startAfter(nil,50).endAt(nil,80)", integerKeys, ["70", "80"]) {
                $0.queryStarting(afterValue: nil, childKey: "50").queryEnding(atValue: nil, childKey: "80")
            },
            QueryWindowCase("startAfter(nil,2147483647) with a", integerKeysAndA, ["a"]) {
                $0.queryStarting(afterValue: nil, childKey: "2147483647")
            },
            QueryWindowCase("endBefore(nil,50)", integerKeys, ["1", "6", "8"]) { $0.queryEnding(beforeValue: nil, childKey: "50") },
            QueryWindowCase("endBefore(nil,-2147483648) on {1}", ["1": true], []) {
                $0.queryEnding(beforeValue: nil, childKey: "-2147483648")
            },
            QueryWindowCase("endBefore(nil,2147483647) with a", integerKeysAndA, ["1", "6", "8", "50", "70", "80", "550", "600"]) {
                $0.queryEnding(beforeValue: nil, childKey: "2147483647")
            },
        ])
    func integerKeysInKeyArgumentsOfDefaultIndex(_ c: QueryWindowCase) throws { try c.run() }

    static let mixedValues: JSONValue = [
        "f": false, "t": true, "im1": -1, "d1": 1.0, "i1": 1, "d15": 1.5, "i10": 10, "s3": "", "s2": "B", "s": "a", "o": ["x": 1],
        "o2": ["a": 0],
    ]
    static let mixedChildV: JSONValue = [
        "a": ["v": "x"], "b": ["v": true], "c": [:], "d": ["v": 3], "e": ["v": false], "f": ["v": ["deep": 1]], "g": ["v": -1], "h": "leaf",
        "i": ["v": "B"],
    ]

    @Test(
        "value and child orders on mixed types, with ranges",
        arguments: [
            QueryWindowCase("orderByValue", mixedValues, ["f", "t", "im1", "d1", "i1", "d15", "i10", "s3", "s2", "s", "o", "o2"]) {
                $0.queryOrderedByValue()
            },
            QueryWindowCase("orderByChild(v)", mixedChildV, ["h", "e", "b", "g", "d", "i", "a", "f"]) { $0.queryOrdered(byChild: "v") },
            QueryWindowCase("orderByChild(v).startAt(false).endAt(true)", mixedChildV, ["e", "b"]) {
                $0.queryOrdered(byChild: "v").queryStarting(atValue: false).queryEnding(atValue: true)
            },
            QueryWindowCase("orderByChild(v).equalTo(nil)", mixedChildV, ["h"]) { $0.queryOrdered(byChild: "v").queryEqual(toValue: nil) },
            QueryWindowCase("orderByValue.startAt(true).endAt(1)", mixedValues, ["t", "im1", "d1", "i1"]) {
                $0.queryOrderedByValue().queryStarting(atValue: true).queryEnding(atValue: 1)
            },
            QueryWindowCase("orderByValue.startAfter(\"\").limitToFirst(2)", mixedValues, ["s2", "s"]) {
                $0.queryOrderedByValue().queryStarting(afterValue: "").queryLimited(toFirst: 2)
            },
        ])
    func valueAndChildOrdersOnMixedTypesWithRanges(_ c: QueryWindowCase) throws { try c.run() }

    static let keyIndexData: JSONValue = [
        "a": [".value": "a", ".priority": 10], "b": [".value": "b", ".priority": 5], "c": [".value": "c", ".priority": 20],
        "d": [".value": "d", ".priority": 7], "e": [".value": "e", ".priority": 30], "f": [".value": "f", ".priority": 8],
    ]

    @Test(
        "the key index ignores priorities",
        arguments: [
            QueryWindowCase("default order", keyIndexData, ["b", "d", "f", "a", "c", "e"]) { $0 },
            QueryWindowCase("orderByKey.startAt(c)", keyIndexData, ["c", "d", "e", "f"]) {
                $0.queryOrderedByKey().queryStarting(atValue: "c")
            },
            QueryWindowCase("orderByKey.limitToLast(5)", keyIndexData, ["b", "c", "d", "e", "f"]) {
                $0.queryOrderedByKey().queryLimited(toLast: 5)
            },
            QueryWindowCase("orderByKey.startAt(b).limitToFirst(2)", keyIndexData, ["b", "c"]) {
                $0.queryOrderedByKey().queryStarting(atValue: "b").queryLimited(toFirst: 2)
            },
            QueryWindowCase("orderByKey.startAfter(b).endBefore(e)", keyIndexData, ["c", "d"]) {
                $0.queryOrderedByKey().queryStarting(afterValue: "b").queryEnding(beforeValue: "e")
            },
            QueryWindowCase("orderByKey.equalTo(d)", keyIndexData, ["d"]) { $0.queryOrderedByKey().queryEqual(toValue: "d") },
        ])
    func keyIndexIgnoresPriorities(_ c: QueryWindowCase) throws { try c.run() }

    // MARK: Events of ordered and limited queries

    static let scores: JSONValue = [
        "Vikrum": [".priority": 1000, "score": 1000, "name": "Vikrum"],
        "Mike": [".priority": 500, "score": 500, "name": "Mike"],
        "Andrew": [".priority": 50, "score": 50, "name": "Andrew"],
        "James": [".priority": 7, "score": 7, "name": "James"],
        "Sally": [".priority": -7, "score": -7, "name": "Sally"],
        "Fred": ["score": 0, "name": "Fred"],
    ]

    @Test("limitToLast(5) over mixed null and numeric priorities leaves the null one out", arguments: [false, true])
    func limitToLastLeavesNullPriorityOut(registerFirst: Bool) throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        if registerFirst { log.observe(ref.queryLimited(toLast: 5), [.childAdded]) }
        try ref.queueSetValue(Self.scores)
        db.drain()
        if !registerFirst {
            log.observe(ref.queryLimited(toLast: 5), [.childAdded])
            db.drain()
        }
        let events = log.take()
        #expect(events.map(\.key) == ["Sally", "James", "Andrew", "Mike", "Vikrum"])
        #expect(events.map(\.prev) == [nil, "Sally", "James", "Andrew", "Mike"])
        #expect(events.first?.data == ["score": -7, "name": "Sally"])
    }

    @Test("child_added of orderByChild arrive in index order per write")
    func orderByChildAddsArriveInIndexOrder() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "value"), [.childAdded])
        db.drain()
        try ref.queueSetValue(["a": ["value": 5], "c": ["value": 3]])
        db.drain()
        #expect(log.take() == [.added("c", nil, ["value": 3]), .added("a", "c", ["value": 5])])
        try ref.queueUpdateChildValues(["b": ["value": 4], "d": ["value": 2]])
        db.drain()
        #expect(log.take() == [.added("d", nil, ["value": 2]), .added("b", "c", ["value": 4])])
    }

    @Test("an indexed value change inside orderByChild(age).limitToLast(4) moves the child")
    func indexedValueChangeInsideWindowMoves() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            [
                "4": ["age": 41, "name": "old"], "5": ["age": 18, "name": "young"],
                "6": ["age": 20, "name": "mid"], "7": ["age": 30, "name": "older"],
            ] as JSONValue)
        db.drain()
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "age").queryLimited(toLast: 4))
        db.drain()
        let p4: JSONValue = ["age": 41, "name": "old"]
        let p5: JSONValue = ["age": 18, "name": "young"]
        let p6: JSONValue = ["age": 20, "name": "mid"]
        let p7: JSONValue = ["age": 30, "name": "older"]
        #expect(
            log.take() == [
                .added("5", nil, p5), .added("6", "5", p6), .added("7", "6", p7), .added("4", "7", p4),
                .value(["5": p5, "6": p6, "7": p7, "4": p4]),
            ])
        try ref.child("4/age").queueSetValue(25)
        db.drain()
        let p4b: JSONValue = ["age": 25, "name": "old"]
        #expect(log.take() == [.moved("4", "6", p4b), .changed("4", "6", p4b), .value(["5": p5, "6": p6, "4": p4b, "7": p7])])
    }

    // MARK: child_moved with orderByChild

    static let nuggets: JSONValue = [
        "alex": ["nuggets": 60], "rob": ["nuggets": 56], "vassili": ["nuggets": 55.5], "tony": ["nuggets": 52], "greg": ["nuggets": 52],
    ]

    @Test("child_moved with orderByChild only when the indexed child changes")
    func section74() throws {
        let ref = try self.reference(holding: Self.nuggets, at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "nuggets"))
        db.drain()
        let n: (JSONValue) -> JSONValue = { ["nuggets": $0] }
        #expect(
            log.take() == [
                .added("greg", nil, n(52)), .added("tony", "greg", n(52)), .added("vassili", "tony", n(55.5)),
                .added("rob", "vassili", n(56)),
                .added("alex", "rob", n(60)), .value(["greg": n(52), "tony": n(52), "vassili": n(55.5), "rob": n(56), "alex": n(60)]),
            ])
        try ref.child("greg/nuggets").queueSetValue(57)
        db.drain()
        #expect(
            log.take() == [
                .moved("greg", "rob", n(57)), .changed("greg", "rob", n(57)),
                .value(["tony": n(52), "vassili": n(55.5), "rob": n(56), "greg": n(57), "alex": n(60)]),
            ])
        try ref.child("greg/name").queueSetValue("G")
        db.drain()
        let greg: JSONValue = ["nuggets": 57, "name": "G"]
        #expect(
            log.take() == [
                .changed("greg", "rob", greg), .value(["tony": n(52), "vassili": n(55.5), "rob": n(56), "greg": greg, "alex": n(60)]),
            ])
    }

    // MARK: Filtered views never carry a top-level priority

    @Test("limitToLast(2) on a node with a priority exports no top-level priority")
    func limitedQueryExportsNoTopLevelPriority() throws {
        let ref = try self.reference(holding: ["a": "blah", ".priority": "priority"], at: "list")
        let limited = try #require(queryRead(ref.queryLimited(toLast: 2), db))
        #expect(limited.exportJSON == ["a": "blah"])
        #expect(limited.priority is NSNull)
        let plain = try #require(queryRead(ref, db))
        #expect(plain.exportJSON == ["a": "blah", ".priority": "priority"])
        #expect(plain.priority as? String == "priority")
    }

    @Test(
        "filtered views never carry a top-level priority; their children keep theirs",
        arguments: [
            QueryWindowCase("limitToFirst(5)", .null, []) { $0.queryLimited(toFirst: 5) },
            QueryWindowCase("startAt(nil)", .null, []) { $0.queryStarting(atValue: nil) },
            QueryWindowCase("endAt(\"z\")", .null, []) { $0.queryEnding(atValue: "z") },
            QueryWindowCase("orderByKey.startAt(a)", .null, []) { $0.queryOrderedByKey().queryStarting(atValue: "a") },
            QueryWindowCase("orderByChild(x).limitToLast(3)", .null, []) { $0.queryOrdered(byChild: "x").queryLimited(toLast: 3) },
            QueryWindowCase("orderByValue.equalTo(1)", .null, []) { $0.queryOrderedByValue().queryEqual(toValue: 1) },
        ])
    func filteredViewsHaveNoTopPriority(_ c: QueryWindowCase) throws {
        let ref = try self.reference(
            holding: [".priority": "top", "a": [".value": 1, ".priority": 5], "b": ["x": 2, ".priority": "p"]] as JSONValue, at: "list")
        let query = c.build(ref)
        let snapshot = try #require(queryRead(query, db))
        #expect(snapshot.priority is NSNull)
        #expect(snapshot.exportJSON[".priority"] == nil)
        for child in snapshot.childSnapshots {
            #expect(child.exportJSON[".priority"] != nil, "child \(child.key ?? "") keeps its priority")
        }
        // A live value observer sees the same.
        var live: DataSnapshot?
        query.observe(.value) { live = $0 }
        db.drain()
        #expect(live?.priority is NSNull)
        #expect(live?.exportJSON == snapshot.exportJSON)
        // Changing only the location's own priority changes nothing a filtered view shows.
        var count = 0
        query.observe(.value) { _ in count += 1 }
        db.drain()
        try ref.queueSetPriority("other")
        db.drain()
        #expect(count == 1, "no value event for a top-level priority change")
    }

    @Test("a filtered view of a leaf is empty; leaf→leaf raises nothing, leaf→object raises child_added and value")
    func filteredLeaf() throws {
        let ref = try self.reference(holding: "leaf-node", at: "list")
        let query = ref.queryOrdered(byChild: "foo").queryLimited(toLast: 1)
        #expect(queryRead(query, db)?.exists() == false)
        #expect(queryRead(ref.queryStarting(atValue: nil), db)?.exists() == false)
        let log = QueryEventLog()
        log.observe(query)
        db.drain()
        #expect(log.take() == [.valueNull()])
        try ref.queueSetValue("another-leaf")
        db.drain()
        #expect(log.take() == [])
        try ref.queueSetValue(["a": ["foo": 1]])
        db.drain()
        #expect(log.take() == [.added("a", nil, ["foo": 1]), .value(["a": ["foo": 1]])])
        try ref.queueSetValue("leaf-again")
        db.drain()
        #expect(log.take() == [.removed("a", ["foo": 1]), .valueNull()])
    }

    @Test(
        "unfiltered ordered views keep the location's priority and leaf value",
        arguments: [
            QueryWindowCase("orderByChild(x)", .null, []) { $0.queryOrdered(byChild: "x") },
            QueryWindowCase("orderByValue", .null, []) { $0.queryOrderedByValue() },
            QueryWindowCase("orderByKey", .null, []) { $0.queryOrderedByKey() },
            QueryWindowCase("orderByPriority", .null, []) { $0.queryOrderedByPriority() },
        ])
    func unfilteredKeepPriority(_ c: QueryWindowCase) throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue("leaf", andPriority: 3)
        db.drain()
        let query = c.build(ref)
        let leaf = try #require(queryRead(query, db))
        #expect(leaf.json == "leaf")
        #expect(leaf.exportJSON == [".value": "leaf", ".priority": 3])
        let log = QueryEventLog()
        log.observe(query)
        db.drain()
        #expect(log.take() == [.leaf("leaf")])
        try ref.queueSetValue("leaf2", andPriority: 3)
        db.drain()
        #expect(log.take() == [.leaf("leaf2")])
        try ref.queueSetValue(["x": 1, "y": 2, ".priority": "p"] as JSONValue)
        db.drain()
        #expect(queryRead(query, db)?.exportJSON == ["x": 1, "y": 2, ".priority": "p"])
        _ = log.take()
        try ref.queueSetPriority("q")
        db.drain()
        let events = log.take()
        #expect(events.count == 1 && events.first?.type == .value, "a priority change of the location raises value: \(events)")
    }

    // MARK: Windows across deep writes, updates and several views

    @Test("an update deleting the whole limitToLast(2) window refills it in one value event")
    func updateDeletingWholeWindowRefillsInOneValueEvent() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            ["a": [".value": 1, ".priority": 1], "b": [".value": 2, ".priority": 2], "c": [".value": 3, ".priority": 3]] as JSONValue)
        db.drain()
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.added("b", nil, 2), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        try ref.queueUpdateChildValues(["b": NSNull(), "c": NSNull()])
        db.drain()
        #expect(log.take() == [.removed("b", 2), .removed("c", 3), .added("a", nil, 1), .value(["a": 1])])
    }

    @Test("an out-of-window child keeps its own listener's value")
    func outOfWindowChildKeepsItsListenerValue() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 1), [.value], tag: "parent")
        log.observe(ref.child("a"), [.value], tag: "child")
        db.drain()
        #expect(log.take() == [.valueNull(tag: "parent"), .valueNull(tag: "child")])
        try ref.queueSetValue(["a": 1, "b": 2])
        db.drain()
        #expect(log.take() == [.leaf(1, tag: "child"), .value(["b": 2], tag: "parent")])
        try ref.queueUpdateChildValues(["c": 3])
        db.drain()
        #expect(log.take() == [.value(["c": 3], tag: "parent")])
    }

    @Test("a child query going out of view of the parent window")
    func childQueryGoingOutOfParentWindow() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 1), [.value], tag: "parent")
        log.observe(ref.child("a"), [.value], tag: "child")
        db.drain()
        #expect(log.take() == [.valueNull(tag: "parent"), .valueNull(tag: "child")])
        try ref.queueSetValue(["a": 1])
        db.drain()
        #expect(log.take() == [.leaf(1, tag: "child"), .value(["a": 1], tag: "parent")])
        try ref.child("b").queueSetValue(2)
        db.drain()
        #expect(log.take() == [.value(["b": 2], tag: "parent")])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.value(["a": 1], tag: "parent")])
    }

    @Test("diverging views of limitToLast(1) with different endAt keys")
    func divergingLimitToLastViewsWithEndAtKeys() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 1).queryEnding(atValue: nil, childKey: "c"), [.value], tag: "c")
        log.observe(ref.queryLimited(toLast: 1).queryEnding(atValue: nil, childKey: "d"), [.value], tag: "d")
        db.drain()
        _ = log.take()
        try ref.queueSetValue(["a": 1, "b": 2, "c": 3])
        db.drain()
        #expect(log.take() == [.value(["c": 3], tag: "c"), .value(["c": 3], tag: "d")])
        try ref.child("d").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.value(["d": 4], tag: "d")])
    }

    @Test("a priority moving between two adjacent ranges")
    func priorityMovingBetweenAdjacentRanges() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryStarting(atValue: 0).queryEnding(atValue: 10), [.childAdded, .childRemoved], tag: "Q1")
        log.observe(ref.queryStarting(atValue: 10).queryEnding(atValue: 20), [.childAdded, .childRemoved], tag: "Q2")
        db.drain()
        #expect(log.take() == [])
        let a = ref.child("a")
        try a.queueSetValue("a", andPriority: 5)
        db.drain()
        #expect(log.take() == [.added("a", nil, "a", tag: "Q1")])
        try a.queueSetPriority(15)
        db.drain()
        #expect(log.take() == [.removed("a", "a", tag: "Q1"), .added("a", nil, "a", tag: "Q2")])
        try a.queueSetPriority(10)
        db.drain()
        #expect(log.take() == [.added("a", nil, "a", tag: "Q1")])
        try a.queueSetPriority(5)
        db.drain()
        #expect(log.take() == [.removed("a", "a", tag: "Q2")])
    }

    @Test("limitToLast(1) with orderByChild refills with the right child")
    func limitToLastOneWithOrderByChildRefills() throws {
        let ref = try self.reference(holding: ["a": ["age": 4], "b": ["age": 3], "c": ["age": 2], "d": ["age": 1]], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "age").queryLimited(toLast: 1))
        db.drain()
        #expect(log.take() == [.added("a", nil, ["age": 4]), .value(["a": ["age": 4]])])
        try ref.child("a").queueSetValue(nil)
        db.drain()
        #expect(log.take() == [.removed("a", ["age": 4]), .added("b", nil, ["age": 3]), .value(["b": ["age": 3]])])
    }

    @Test("an update moving a child out of a ranged limitToFirst(2) window")
    func updateMovesChildOutOfRangedLimitToFirst() throws {
        let ref = try self.reference(holding: ["a": ["index": 1], "b": ["index": 2], "c": ["index": 3]], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "index").queryStarting(atValue: 1).queryEnding(atValue: 10).queryLimited(toFirst: 2))
        db.drain()
        #expect(
            log.take() == [.added("a", nil, ["index": 1]), .added("b", "a", ["index": 2]), .value(["a": ["index": 1], "b": ["index": 2]])])
        try ref.child("a/index").queueSetValue(-1)
        db.drain()
        #expect(
            log.take() == [.removed("a", ["index": 1]), .added("c", "b", ["index": 3]), .value(["b": ["index": 2], "c": ["index": 3]])])
        try ref.child("b/index").queueSetValue(-1)
        db.drain()
        #expect(log.take() == [.removed("b", ["index": 2]), .value(["c": ["index": 3]])])
    }

    @Test("a deep set deleting a window child pulls in the next one")
    func deepSetDeletingWindowChildPullsInNext() throws {
        let ref = try self.reference(holding: ["a": ["aa": 2], "b": ["bb": 2], "c": ["cc": 2]], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.added("b", nil, ["bb": 2]), .added("c", "b", ["cc": 2]), .value(["b": ["bb": 2], "c": ["cc": 2]])])
        try ref.child("b/bb").queueSetValue(nil)
        db.drain()
        #expect(log.take() == [.removed("b", ["bb": 2]), .added("a", nil, ["aa": 2]), .value(["a": ["aa": 2], "c": ["cc": 2]])])
    }

    @Test("a deep update deleting a window child pulls in the next one")
    func deepUpdateDeletingWindowChildPullsInNext() throws {
        let ref = try self.reference(
            holding: ["a": ["aa": 2, "aaa": 3], "b": ["bb": 2, "bbb": 3], "c": ["cc": 2, "ccc": 3]], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2))
        db.drain()
        let a: JSONValue = ["aa": 2, "aaa": 3]
        let b: JSONValue = ["bb": 2, "bbb": 3]
        let c: JSONValue = ["cc": 2, "ccc": 3]
        #expect(log.take() == [.added("b", nil, b), .added("c", "b", c), .value(["b": b, "c": c])])
        try ref.child("b").queueUpdateChildValues(["bb": NSNull(), "bbb": NSNull()])
        db.drain()
        #expect(log.take() == [.removed("b", b), .added("a", nil, a), .value(["a": a, "c": c])])
    }

    @Test("items are pulled into a limitToLast(2) window")
    func itemsArePulledIntoLimitToLastWindow() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 2), [.value])
        db.drain()
        try ref.queueSetValue(
            ["a": [".value": 1, ".priority": 1], "b": [".value": 2, ".priority": 2], "c": [".value": 3, ".priority": 3]] as JSONValue)
        db.drain()
        try ref.child("b").queueSetValue(nil)
        db.drain()
        #expect(log.take() == [.valueNull(), .value(["b": 2, "c": 3]), .value(["a": 1, "c": 3])])
    }

    @Test("orderByChild(order).limitToLast(2) ignores inserts below the window")
    func limitToLastIgnoresInsertsBelowWindow() throws {
        let ref = db.reference(withPath: "list")
        let a: JSONValue = ["order": 2, "name": "a"]
        let b: JSONValue = ["order": 0]
        let c: JSONValue = ["order": 1, "x": true]
        let d: JSONValue = ["order": 3, "y": "d"]
        try ref.queueSetValue(["a": a, "b": b, "c": c, "d": d] as JSONValue)
        db.drain()
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "order").queryLimited(toLast: 2), [.value])
        db.drain()
        #expect(log.take() == [.value(["a": a, "d": d])])
        try ref.child("e").queueSetValue(["order": 1.5])
        db.drain()
        #expect(log.take() == [])
        try ref.child("f").queueSetValue(["order": 4])
        db.drain()
        #expect(log.take() == [.value(["d": d, "f": ["order": 4]])])
    }

    @Test("a priority change out of the range raises child_removed with the old value", arguments: ["startAt(b)", "startAfter(a)"])
    func priorityChangeOutOfRangeRemovesWithOldValue(start: String) throws {
        let ref = db.reference(withPath: "l")
        try ref.child("a").queueSetValue("1", andPriority: "a")
        try ref.child("b").queueSetValue("2", andPriority: "b")
        db.drain()
        let ordered = ref.queryOrderedByPriority()
        let query = (start == "startAt(b)" ? ordered.queryStarting(atValue: "b") : ordered.queryStarting(afterValue: "a")).queryEnding(
            atValue: "d")
        let log = QueryEventLog()
        log.observe(query, [.childRemoved])
        db.drain()
        try ref.child("b").queueSetValue("4", andPriority: "a")
        db.drain()
        #expect(log.take() == [.removed("b", "2")])
    }

    // MARK: Addendum: SDK defects not to copy

    @Test("Addendum 1: limitToLast(1) of orderByChild(x) refills with d (missing values sort first, ties by key), not a")
    func refillPicksD() throws {
        let ref = try self.reference(holding: ["a": 2, "b": ["x": false], "d": 4] as JSONValue, at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "x").queryLimited(toLast: 1))
        db.drain()
        #expect(log.take() == [.added("b", nil, ["x": false]), .value(["b": ["x": false]])])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("b", ["x": false]), .added("d", nil, 4), .value(["d": 4])])
    }

    @Test("Addendum 1: the same refill under the default (priority) order picks d")
    func refillPicksDByPriority() throws {
        let ref = try self.reference(holding: ["a": 2, "b": [".value": "b", ".priority": 1], "d": 4] as JSONValue, at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryLimited(toLast: 1))
        db.drain()
        #expect(log.take() == [.added("b", nil, "b"), .value(["b": "b"])])
        try ref.child("b").queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("b", "b"), .added("d", nil, 4), .value(["d": 4])])
    }

    @Test("Addendum 2: setPriority on an empty location under orderByValue/orderByChild listeners is a no-op raising nothing")
    func setPriorityOnEmpty() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrderedByValue(), tag: "value")
        log.observe(ref.queryOrdered(byChild: "x"), tag: "child")
        log.observe(ref, tag: "plain")
        db.drain()
        #expect(log.take() == [.valueNull(tag: "value"), .valueNull(tag: "child"), .valueNull(tag: "plain")])
        var completion: [(any Error)?] = []
        ref.setPriority(5) { error, _ in completion.append(error) }
        db.drain()
        #expect(log.take() == [])
        #expect(completion.count == 1)
        #expect(completion.first.flatMap { $0 } != nil, "the completion reports that nothing was written")
        #expect(queryRead(ref, db)?.exportJSON == .null)

        // The same for a missing child of a location that has data.
        try ref.queueSetValue(["a": 1])
        db.drain()
        _ = log.take()
        try ref.child("zz").queueSetPriority(7)
        db.drain()
        #expect(log.take() == [])
        #expect(log.cancellations.isEmpty)
        #expect(queryRead(ref, db)?.exportJSON == ["a": 1])
    }

    // MARK: Beyond the vectors: moves per index, exclusive key bounds, whole-window changes

    @Test("value index: any change of a child is a move, even deep inside an object or of its priority")
    func valueIndexMoves() throws {
        let ref = try self.reference(holding: ["a": ["x": 1], "b": ["x": 2]], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrderedByValue())
        db.drain()
        _ = log.take()
        try ref.child("a/x").queueSetValue(5)
        db.drain()
        #expect(log.take() == [.moved("a", nil, ["x": 5]), .changed("a", nil, ["x": 5]), .value(["a": ["x": 5], "b": ["x": 2]])])
        try ref.child("b").queueSetPriority(1)
        db.drain()
        #expect(log.take() == [.moved("b", "a", ["x": 2]), .changed("b", "a", ["x": 2]), .value(["a": ["x": 5], "b": ["x": 2]])])
        try ref.child("b/x").queueSetValue(2.0)
        db.drain()
        #expect(log.take() == [], "2 → 2.0 is no change")
    }

    @Test("child index: only a different indexed value is a move; 1 → 1.0 is nothing; object → object is a change")
    func childIndexMoves() throws {
        let ref = try self.reference(holding: ["a": ["v": ["x": 1]], "b": ["v": 1], "c": ["v": 3]] as JSONValue, at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "v"))
        db.drain()
        #expect(log.take().map(\.key) == ["b", "c", "a", "list"])
        try ref.child("b/v").queueSetValue(1.0)
        db.drain()
        #expect(log.take() == [])
        try ref.child("a/v/x").queueSetValue(2)
        db.drain()
        #expect(log.take() == [.changed("a", "c", ["v": ["x": 2]]), .value(["b": ["v": 1], "c": ["v": 3], "a": ["v": ["x": 2]]])])
        try ref.child("b").queueSetPriority("p")
        db.drain()
        #expect(
            log.take() == [.changed("b", nil, ["v": 1]), .value(["b": ["v": 1], "c": ["v": 3], "a": ["v": ["x": 2]]])],
            "a priority change is no move on a child index")
        try ref.child("b/v").queueSetValue(2)
        db.drain()
        #expect(
            log.take() == [
                .moved("b", nil, ["v": 2]), .changed("b", nil, ["v": 2]), .value(["b": ["v": 2], "c": ["v": 3], "a": ["v": ["x": 2]]]),
            ])
    }

    @Test("key index: never a move; priority index: any priority change is a move")
    func keyAndPriorityIndexMoves() throws {
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            [
                "a": [".value": "a", ".priority": 0], "b": [".value": "b", ".priority": 1], "c": [".value": "c", ".priority": 2],
                "d": [".value": "d", ".priority": 3],
            ] as JSONValue)
        db.drain()
        let byKey = QueryEventLog()
        byKey.observe(ref.queryOrderedByKey(), [.childMoved, .childChanged])
        let byPriority = QueryEventLog()
        byPriority.observe(ref, [.childMoved, .childChanged])
        db.drain()
        try ref.child("b").queueSetValue("b", andPriority: 1.5)
        db.drain()
        #expect(byKey.take() == [.changed("b", "a", "b")])
        #expect(byPriority.take() == [.moved("b", "a", "b"), .changed("b", "a", "b")])
        try ref.child("b").queueSetValue("b2", andPriority: 1.5)
        db.drain()
        #expect(byKey.take() == [.changed("b", "a", "b2")])
        #expect(byPriority.take() == [.changed("b", "a", "b2")], "a value change with the same priority is no move")
        try ref.child("b").queueSetPriority(1.5)
        db.drain()
        #expect(byKey.take() == [])
        #expect(byPriority.take() == [])
    }

    @Test("a change moving a child past the first one outside a limitToFirst window swaps it for that one")
    func limitToFirstMovePastBoundary() throws {
        let ref = try self.reference(holding: ["a": 1, "b": 2, "c": 3], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrderedByValue().queryLimited(toFirst: 2))
        db.drain()
        #expect(log.take() == [.added("a", nil, 1), .added("b", "a", 2), .value(["a": 1, "b": 2])])
        try ref.child("a").queueSetValue(2.5)
        db.drain()
        #expect(log.take() == [.moved("a", "b", 2.5), .changed("a", "b", 2.5), .value(["b": 2, "a": 2.5])])
        try ref.child("a").queueSetValue(4)
        db.drain()
        #expect(log.take() == [.removed("a", 2.5), .added("c", "b", 3), .value(["b": 2, "c": 3])])
        // One write replacing everything: removals first (old order), then additions (new order).
        try ref.queueSetValue(["x": 0.5, "y": 1.5, "c": 3, "z": 2.5])
        db.drain()
        #expect(
            log.take() == [.removed("b", 2), .removed("c", 3), .added("x", nil, 0.5), .added("y", "x", 1.5), .value(["x": 0.5, "y": 1.5])])
    }

    @Test("removing the location removes the window's children in index order, then value null")
    func removeWholeWindow() throws {
        let ref = try self.reference(holding: ["a": 3, "b": 1, "c": 2, "d": 0], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrderedByValue().queryLimited(toLast: 2))
        db.drain()
        #expect(log.take() == [.added("c", nil, 2), .added("a", "c", 3), .value(["c": 2, "a": 3])])
        try ref.queueRemoveValue()
        db.drain()
        #expect(log.take() == [.removed("c", 2), .removed("a", 3), .valueNull()])
        try ref.parent!.queueSetValue(["list": ["q": 7]])
        db.drain()
        #expect(log.take() == [.added("q", nil, 7), .value(["q": 7])])
    }

    @Test(
        "key index: exclusive bounds are exact, including integer keys with leading zeros",
        arguments: [
            QueryWindowCase("startAfter(5)", ["5": 1, "05": 2, "6": 3, "a": 4], ["05", "6", "a"]) {
                $0.queryOrderedByKey().queryStarting(afterValue: "5")
            },
            QueryWindowCase("endBefore(05)", ["5": 1, "05": 2, "6": 3, "a": 4], ["5"]) {
                $0.queryOrderedByKey().queryEnding(beforeValue: "05")
            },
            QueryWindowCase("equalTo(05)", ["5": 1, "05": 2, "6": 3, "a": 4], ["05"]) { $0.queryOrderedByKey().queryEqual(toValue: "05") },
            QueryWindowCase("startAfter(2147483647)", ["2147483647": 1, " ": 2, "-": 3, "0": 4], [" ", "-"]) {
                $0.queryOrderedByKey().queryStarting(afterValue: "2147483647")
            },
            QueryWindowCase("endBefore(-2147483648)", ["-2147483648": 1, "0": 2], []) {
                $0.queryOrderedByKey().queryEnding(beforeValue: "-2147483648")
            },
            QueryWindowCase("startAfter(abc)", ["abc": 1, "abc-": 2, "abc ": 3, "abd": 4], ["abc ", "abc-", "abd"]) {
                $0.queryOrderedByKey().queryStarting(afterValue: "abc")
            },
            QueryWindowCase("endBefore(abc)", ["abb": 1, "abbz": 2, "abc": 3], ["abb", "abbz"]) {
                $0.queryOrderedByKey().queryEnding(beforeValue: "abc")
            },
            QueryWindowCase("startAt(b).endAt(a) (inverted)", ["a": 1, "b": 2], []) {
                $0.queryOrderedByKey().queryStarting(atValue: "b").queryEnding(atValue: "a")
            },
            QueryWindowCase("startAt(9).limitToFirst(2)", ["10": 1, "9": 2, "8": 3, "x": 4], ["9", "10"]) {
                $0.queryOrderedByKey().queryStarting(atValue: "9").queryLimited(toFirst: 2)
            },
        ])
    func keyIndexExclusiveBounds(_ c: QueryWindowCase) throws { try c.run() }

    @Test(
        "null bounds on a child index: missing values are null",
        arguments: [
            QueryWindowCase("endAt(nil)", ["a": ["v": 1], "b": 2, "c": ["w": 1], "d": ["v": false]] as JSONValue, ["b", "c"]) {
                $0.queryOrdered(byChild: "v").queryEnding(atValue: nil)
            },
            QueryWindowCase("startAfter(nil)", ["a": ["v": 1], "b": 2, "c": ["w": 1], "d": ["v": false]] as JSONValue, ["d", "a"]) {
                $0.queryOrdered(byChild: "v").queryStarting(afterValue: nil)
            },
            QueryWindowCase("equalTo(false)", ["a": ["v": 0], "b": 2, "c": ["v": false], "d": ["v": false]] as JSONValue, ["c", "d"]) {
                $0.queryOrdered(byChild: "v").queryEqual(toValue: false)
            },
            QueryWindowCase("startAt(nil, c)", ["a": ["v": 1], "b": 2, "c": ["w": 1], "d": ["v": false]] as JSONValue, ["c", "d", "a"]) {
                $0.queryOrdered(byChild: "v").queryStarting(atValue: nil, childKey: "c")
            },
            QueryWindowCase("endBefore(nil, c)", ["a": ["v": 1], "b": 2, "c": ["w": 1], "d": ["v": false]] as JSONValue, ["b"]) {
                $0.queryOrdered(byChild: "v").queryEnding(beforeValue: nil, childKey: "c")
            },
            QueryWindowCase(
                "nested path equalTo(x)", ["a": ["m": ["v": "x"]], "b": ["m": "x"], "c": ["m": ["v": "x", "w": 1]]] as JSONValue,
                ["a", "c"]
            ) { $0.queryOrdered(byChild: "m/v").queryEqual(toValue: "x") },
        ])
    func childIndexNullBounds(_ c: QueryWindowCase) throws { try c.run() }

    @Test("views at one location fire in the order they were created, not in the order of later registrations")
    func viewCreationOrder() throws {
        let ref = db.reference(withPath: "list")
        let log = QueryEventLog()
        let limited = log.observe(ref.queryLimited(toLast: 1), [.value], tag: "limited#1")
        log.observe(ref, [.value], tag: "plain")
        log.observe(ref.queryLimited(toLast: 1), [.value], tag: "limited#2")
        db.drain()
        _ = log.take()
        try ref.child("a").queueSetValue(1)
        db.drain()
        #expect(log.take() == [.value(["a": 1], tag: "limited#1"), .value(["a": 1], tag: "limited#2"), .value(["a": 1], tag: "plain")])
        // Removing every observer of the limited view ends it; a new one comes after the plain view.
        for handle in limited { ref.removeObserver(withHandle: handle) }
        ref.queryLimited(toLast: 1).removeAllObservers()
        log.observe(ref.queryLimited(toLast: 1), [.value], tag: "limited#3")
        db.drain()
        _ = log.take()
        try ref.child("b").queueSetValue(2)
        db.drain()
        #expect(log.take() == [.value(["a": 1, "b": 2], tag: "plain"), .value(["b": 2], tag: "limited#3")])
    }

    @Test("rewriting identical data, or data outside the window, raises nothing for a query")
    func identicalWrites() throws {
        let ref = try self.reference(holding: ["a": 1, "b": 2, "c": 3], at: "list")
        let log = QueryEventLog()
        log.observe(ref.queryOrderedByValue().queryLimited(toLast: 2))
        db.drain()
        _ = log.take()
        try ref.queueSetValue(["a": 1, "b": 2.0, "c": 3])
        try ref.child("a").queueSetValue(0)
        try ref.child("zz").queueSetValue(-5)
        try ref.parent!.child("sibling").queueSetValue(1)
        db.drain()
        #expect(log.take() == [])
    }

    @Test("numbers compare exactly: Int64 2^53+1 sorts after the double 2^53, also in bounds")
    func exactNumberOrder() throws {
        let data: JSONValue = ["a": .int(9_007_199_254_740_993), "b": .double(9_007_199_254_740_992), "c": .int(9_007_199_254_740_992)]
        try QueryWindowCase("orderByValue", data, ["b", "c", "a"]) { $0.queryOrderedByValue() }.run()
        try QueryWindowCase("startAt(2^53+1)", data, ["a"]) {
            $0.queryOrderedByValue().queryStarting(atValue: Int64(9_007_199_254_740_993))
        }.run()
        try QueryWindowCase("endBefore(2^53+1)", data, ["b", "c"]) {
            $0.queryOrderedByValue().queryEnding(beforeValue: Int64(9_007_199_254_740_993))
        }.run()
        try QueryWindowCase("equalTo(2^53 as Double)", data, ["b", "c"]) {
            $0.queryOrderedByValue().queryEqual(toValue: 9_007_199_254_740_992.0)
        }.run()
    }

    @Test("a query on a deep location follows writes at its ancestors")
    func ancestorWrites() throws {
        let root = db.reference()
        let ref = root.child("a/b/list")
        let log = QueryEventLog()
        log.observe(ref.queryOrdered(byChild: "n").queryLimited(toFirst: 2))
        db.drain()
        #expect(log.take() == [.valueNull()])
        try root.queueSetValue(["a": ["b": ["list": ["x": ["n": 3], "y": ["n": 1], "z": ["n": 2]]]]])
        db.drain()
        #expect(log.take() == [.added("y", nil, ["n": 1]), .added("z", "y", ["n": 2]), .value(["y": ["n": 1], "z": ["n": 2]])])
        try root.queueUpdateChildValues(["a/b/list/y/n": 4, "a/b/other": true])
        db.drain()
        #expect(log.take() == [.removed("y", ["n": 1]), .added("x", "z", ["n": 3]), .value(["z": ["n": 2], "x": ["n": 3]])])
        try root.child("a").queueSetValue("leaf")
        db.drain()
        #expect(log.take() == [.removed("z", ["n": 2]), .removed("x", ["n": 3]), .valueNull()])
    }

    // MARK: Removing observers of queries

    @Test("removal by handle on the reference reaches every query; on a query only that query's observers")
    func removalByHandleOnReferenceReachesEveryQuery() throws {
        let ref = db.reference(withPath: "list")
        var calls: [String] = []
        let foo = ref.queryOrdered(byChild: "foo").observe(.value) { _ in calls.append("foo") }
        ref.queryOrdered(byChild: "bar").observe(.value) { _ in calls.append("bar") }
        let baz = ref.queryOrdered(byChild: "baz").observe(.value) { _ in calls.append("baz") }
        ref.observe(.value) { _ in calls.append("ref") }
        db.drain()
        calls.removeAll()
        var n = 0
        func write() throws -> Int {
            n += 1
            calls.removeAll()
            try ref.queueSetValue(["a": ["foo": n, "bar": -n, "baz": n % 2]])
            db.drain()
            return calls.count
        }
        #expect(try write() == 4)
        ref.removeObserver(withHandle: foo)
        #expect(try write() == 3)
        ref.queryOrdered(byChild: "foo").removeObserver(withHandle: baz)
        #expect(try write() == 3, "a query only finds its own observers")
        ref.queryOrdered(byChild: "bar").removeAllObservers()
        #expect(try write() == 2)
        #expect(calls.sorted() == ["baz", "ref"])
        ref.removeAllObservers()
        #expect(try write() == 0)
    }

    @Test(
        "an observer of limitToLast(5) is removed from the reference, from an equal query, or by removeAllObservers",
        arguments: [0, 1, 2, 3])
    func limitToLastObserverRemovedEveryWay(way: Int) throws {
        let ref = db.reference(withPath: "list")
        var calls = 0
        let handle = ref.queryLimited(toLast: 5).observe(.value) { _ in calls += 1 }
        db.drain()
        #expect(calls == 1)
        switch way {
        case 0: ref.removeObserver(withHandle: handle)
        case 1: ref.queryLimited(toLast: 5).removeObserver(withHandle: handle)
        case 2: ref.removeAllObservers()
        default: ref.queryLimited(toLast: 5).removeAllObservers()
        }
        // A different query at the same location does not find it.
        ref.queryLimited(toLast: 4).removeAllObservers()
        try ref.child("x").queueSetValue(1)
        db.drain()
        #expect(calls == 1)
    }

    @Test("removal from a different query at the same location is a no-op")
    func removalFromDifferentQueryIsNoOp() throws {
        let ref = db.reference(withPath: "list")
        var calls = 0
        let handle = ref.queryLimited(toLast: 5).observe(.value) { _ in calls += 1 }
        db.drain()
        ref.queryLimited(toLast: 4).removeObserver(withHandle: handle)
        ref.queryOrderedByKey().removeAllObservers()
        ref.child("x").removeAllObservers()
        try ref.child("x").queueSetValue(1)
        db.drain()
        #expect(calls == 2)
    }
}
