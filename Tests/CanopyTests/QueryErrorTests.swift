import Canopy
import Foundation
import Testing

/// An invalid query and the messages it may report (the iOS SDK's reason; a second entry allows
/// the `…:childKey:` selector that iOS names when it forwards to that method).
struct QueryErrorCase: Sendable, CustomTestStringConvertible {
    let name: String
    let messages: [String]
    let build: @Sendable (DatabaseReference) -> DatabaseQuery
    var testDescription: String { self.name }

    init(_ name: String, _ messages: [String], _ build: @escaping @Sendable (DatabaseReference) -> DatabaseQuery) {
        self.name = name
        self.messages = messages
        self.build = build
    }

    init(_ name: String, _ message: String, _ build: @escaping @Sendable (DatabaseReference) -> DatabaseQuery) {
        self.init(name, [message], build)
    }
}

/// A query that must be accepted.
struct QueryValidCase: Sendable, CustomTestStringConvertible {
    let name: String
    let build: @Sendable (DatabaseReference) -> DatabaseQuery
    var testDescription: String { self.name }

    init(_ name: String, _ build: @escaping @Sendable (DatabaseReference) -> DatabaseQuery) {
        self.name = name
        self.build = build
    }
}

// The reasons iOS gives for invalid query constraints.
private let multipleOrderBy = "Cannot use multiple queryOrderedBy calls!"
private let limitFirstTwice = "Can't call queryLimitedToFirst: if a limit was previously set"
private let limitLastTwice = "Can't call queryLimitedToLast: if a limit was previously set"
private let limitZero = "Limit can't be zero"
private let limitTooLarge = "Limit must be less than 2,147,483,648"
private let startTwiceTail = " after queryStartingAtValue, queryStartingAfterValue, or queryEqualToValue was previously called"
private let startAtTwice = "Can't call queryStartingAtValue:" + startTwiceTail
private let startAfterTwice = [
    "Can't call queryStartingAfterValue:" + startTwiceTail, "Can't call queryStartingAfterValue:childKey:" + startTwiceTail,
]
private let endTwiceTail = " after queryEndingAtValue or queryEqualToValue was previously called"
private let endAtTwice = "Can't call queryEndingAtValue:" + endTwiceTail
private let endBeforeTwice = [
    "Can't call queryEndingBeforeValue:" + endTwiceTail, "Can't call queryEndingBeforeValue:childKey:" + endTwiceTail,
]
private let equalAfterRange =
    "Can't call queryEqualToValue: after queryStartingAtValue, queryStartingAfterValue, queryEndingAtValue, queryEndingBeforeValue or queryEqualToValue was previously called"
private let priorityValues =
    "When using queryOrderedByPriority, values provided to queryStartingAtValue:, queryStartingAfterValue:, queryEndingAtValue:, queryEndingBeforeValue:, or queryEqualToValue: must be valid priorities."
private let keyStartNonString =
    "Can't use queryStartingAtValue: or queryStartingAfterValue: with non-string types when used with queryOrderedByKey"
private let keyEndNonString =
    "Can't use queryEndingAtValue: or queryEndingBeforeValue: with other types than string in combination with queryOrderedByKey"
private let keyStartChildKey =
    "Can't use queryStartingAtValue:childKey:, queryStartingAfterValue:childKey:, or queryEqualTo:andChildKey: in combination with queryOrderedByKey"
private let keyEndChildKey =
    "Can't use queryEndingAtValue:childKey: or queryEndingBeforeValue:childKey: queryEqualToValue:childKey: in combination with queryOrderedByKey"
private let childInvalidPath = "(queryOrderedByChild:) Must be a non-empty string and not contain '.' '#' '$' '[' or ']'"
private let childEmptyPath = "(queryOrderedByChild:) with an empty path is invalid.  Use queryOrderedByValue: instead."

private func onlyNilStringOrNumber(_ method: String) -> [String] {
    ["You can only pass nil, NSString or NSNumber to \(method):", "You can only pass nil, NSString or NSNumber to \(method):childKey:"]
}

private func invalidChildKey(_ method: String) -> String {
    "(\(method):childKey:) Must be a non-empty string and not contain '/' '.' '#' '$' '[' or ']'"
}

/// The four orders, for the 16 pairs of orderBy calls.
private let orders: [(String, @Sendable (DatabaseQuery) -> DatabaseQuery)] = [
    ("Priority", { $0.queryOrderedByPriority() }),
    ("Key", { $0.queryOrderedByKey() }),
    ("Child", { $0.queryOrdered(byChild: "foo") }),
    ("Value", { $0.queryOrderedByValue() }),
]

/// An endpoint argument that closures can capture (`Any?` is not `Sendable`).
private enum Argument: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)

    var any: Any? {
        switch self {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return i
        case .string(let s): return s
        }
    }
}

/// The endpoint methods, by name.
private enum Endpoint: String, CaseIterable, Sendable {
    case startAt, startAfter, endAt, endBefore, equalTo

    func apply(_ q: DatabaseQuery, _ value: Any?, key: String? = nil) -> DatabaseQuery {
        switch self {
        case .startAt: return q.queryStarting(atValue: value, childKey: key)
        case .startAfter: return q.queryStarting(afterValue: value, childKey: key)
        case .endAt: return q.queryEnding(atValue: value, childKey: key)
        case .endBefore: return q.queryEnding(beforeValue: value, childKey: key)
        case .equalTo: return q.queryEqual(toValue: value, childKey: key)
        }
    }

    /// The iOS selector without `:`.
    var iosName: String {
        switch self {
        case .startAt: return "queryStartingAtValue"
        case .startAfter: return "queryStartingAfterValue"
        case .endAt: return "queryEndingAtValue"
        case .endBefore: return "queryEndingBeforeValue"
        case .equalTo: return "queryEqualToValue"
        }
    }

    /// The reason iOS gives when this method is called after a start/end/equalTo that conflicts.
    var twiceMessages: [String] {
        switch self {
        case .startAt: return [startAtTwice]
        case .startAfter: return startAfterTwice
        case .endAt: return [endAtTwice]
        case .endBefore: return endBeforeTwice
        case .equalTo: return [equalAfterRange]
        }
    }

    var isStart: Bool { self == .startAt || self == .startAfter || self == .equalTo }
}

/// All invalid query constructions expressible with the Swift API.
private let invalidQueries: [QueryErrorCase] = {
    var cases: [QueryErrorCase] = []
    // Every pair of queryOrderedBy* calls.
    for (first, a) in orders {
        for (second, b) in orders {
            cases.append(QueryErrorCase("queryOrderedBy\(first).queryOrderedBy\(second)", multipleOrderBy) { b(a($0)) })
        }
    }
    // Any second limit.
    cases += [
        QueryErrorCase("limitToLast(100).limitToFirst(100)", limitFirstTwice) { $0.queryLimited(toLast: 100).queryLimited(toFirst: 100) },
        QueryErrorCase("limitToFirst(100).limitToLast(100)", limitLastTwice) { $0.queryLimited(toFirst: 100).queryLimited(toLast: 100) },
        QueryErrorCase("limitToFirst(1).limitToFirst(1)", limitFirstTwice) { $0.queryLimited(toFirst: 1).queryLimited(toFirst: 1) },
        QueryErrorCase("limitToLast(1).limitToLast(1)", limitLastTwice) { $0.queryLimited(toLast: 1).queryLimited(toLast: 1) },
        QueryErrorCase("orderByKey.limitToLast(3).startAt(a).limitToFirst(3)", limitFirstTwice) {
            $0.queryOrderedByKey().queryLimited(toLast: 3).queryStarting(atValue: "a").queryLimited(toFirst: 3)
        },
    ]
    // Limits 0 and ≥ 2^31.
    cases += [
        QueryErrorCase("limitToFirst(0)", limitZero) { $0.queryLimited(toFirst: 0) },
        QueryErrorCase("limitToLast(0)", limitZero) { $0.queryLimited(toLast: 0) },
        QueryErrorCase("limitToFirst(2^31)", limitTooLarge) { $0.queryLimited(toFirst: 1 << 31) },
        QueryErrorCase("limitToLast(2^31)", limitTooLarge) { $0.queryLimited(toLast: 1 << 31) },
        QueryErrorCase("limitToFirst(2^32)", limitTooLarge) { $0.queryLimited(toFirst: 1 << 32) },
        QueryErrorCase("limitToLast(UInt.max)", limitTooLarge) { $0.queryLimited(toLast: UInt.max) },
    ]
    // A second start, end or equalTo.
    let ranges: [(Endpoint, Endpoint)] = [
        (.startAt, .startAt), (.startAfter, .startAfter), (.startAt, .startAfter), (.startAfter, .startAt),
        (.startAt, .equalTo), (.startAfter, .equalTo),
        (.endAt, .endAt), (.endBefore, .endBefore), (.endAt, .endBefore), (.endBefore, .endAt),
        (.endAt, .equalTo), (.endBefore, .equalTo),
        (.equalTo, .startAt), (.equalTo, .startAfter), (.equalTo, .endAt), (.equalTo, .endBefore), (.equalTo, .equalTo),
    ]
    for (first, second) in ranges {
        cases.append(
            QueryErrorCase("\(first.rawValue)(foo).\(second.rawValue)(foo)", second.twiceMessages) {
                second.apply(first.apply($0, "foo"), "foo")
            })
    }
    // The priority index (explicit or default) with a boolean.
    for endpoint in Endpoint.allCases {
        cases.append(
            QueryErrorCase("orderByPriority.\(endpoint.rawValue)(true)", priorityValues) {
                endpoint.apply($0.queryOrderedByPriority(), true)
            })
        cases.append(QueryErrorCase("\(endpoint.rawValue)(false) on the default index", priorityValues) { endpoint.apply($0, false) })
    }
    // Checked when the endpoint is added: the default index is the priority index then.
    cases.append(QueryErrorCase("startAt(true).orderByKey", priorityValues) { $0.queryStarting(atValue: true).queryOrderedByKey() })
    cases.append(QueryErrorCase("endAt(true).orderByKey", priorityValues) { $0.queryEnding(atValue: true).queryOrderedByKey() })
    cases.append(QueryErrorCase("startAt(true).orderByValue", priorityValues) { $0.queryStarting(atValue: true).queryOrderedByValue() })
    // Objects and arrays (and other types) as endpoint values.
    for endpoint in Endpoint.allCases {
        let messages = onlyNilStringOrNumber(endpoint.iosName)
        cases.append(
            QueryErrorCase("orderByChild(foo).\(endpoint.rawValue)({a:1})", messages) {
                endpoint.apply($0.queryOrdered(byChild: "foo"), ["a": 1])
            })
        cases.append(QueryErrorCase("orderByValue.\(endpoint.rawValue)([1])", messages) { endpoint.apply($0.queryOrderedByValue(), [1]) })
        cases.append(QueryErrorCase("\(endpoint.rawValue)([]) on the default index", messages) { endpoint.apply($0, [Any]()) })
        cases.append(QueryErrorCase("\(endpoint.rawValue)([:]) on the default index", messages) { endpoint.apply($0, [String: Any]()) })
        cases.append(
            QueryErrorCase("orderByKey.\(endpoint.rawValue)(Date)", messages) {
                endpoint.apply($0.queryOrderedByKey(), Date(timeIntervalSince1970: 0))
            })
    }
    // The key index with a key argument.
    cases += [
        QueryErrorCase(
            "orderByKey.startAt(foo, foo)",
            "You must use queryStartingAtValue: instead of queryStartingAtValue:childKey: when using queryOrderedByKey:"
        ) {
            $0.queryOrderedByKey().queryStarting(atValue: "foo", childKey: "foo")
        },
        QueryErrorCase(
            "orderByKey.startAfter(foo, foo)",
            "You must use queryStartingAfterValue: instead of queryStartingAfterValue:childKey: when using queryOrderedByKey:"
        ) {
            $0.queryOrderedByKey().queryStarting(afterValue: "foo", childKey: "foo")
        },
        QueryErrorCase(
            "orderByKey.endAt(foo, foo)",
            "You must use queryEndingAtValue: instead of queryEndingAtValue:childKey: when using queryOrderedByKey:"
        ) {
            $0.queryOrderedByKey().queryEnding(atValue: "foo", childKey: "foo")
        },
        QueryErrorCase(
            "orderByKey.endBefore(foo, foo)",
            "You must use queryEndingBeforeValue: instead of queryEndingBeforeValue:childKey: when using queryOrderedByKey:"
        ) {
            $0.queryOrderedByKey().queryEnding(beforeValue: "foo", childKey: "foo")
        },
        QueryErrorCase(
            "orderByKey.equalTo(foo, foo)",
            "You must use queryEqualToValue: instead of queryEqualTo:childKey: when using queryOrderedByKey:"
        ) {
            $0.queryOrderedByKey().queryEqual(toValue: "foo", childKey: "foo")
        },
    ]
    // The key index with a non-string value (number, boolean, nil).
    for endpoint in Endpoint.allCases {
        let message = endpoint.isStart ? keyStartNonString : keyEndNonString
        for (label, value) in [("1", Argument.int(1)), ("true", .bool(true)), ("nil", .null)] {
            cases.append(
                QueryErrorCase("orderByKey.\(endpoint.rawValue)(\(label))", message) { endpoint.apply($0.queryOrderedByKey(), value.any) })
        }
    }
    // A key argument, or a non-string value, before queryOrderedByKey.
    for endpoint in Endpoint.allCases {
        let childKeyMessage = endpoint.isStart ? keyStartChildKey : keyEndChildKey
        let nonStringMessage = endpoint.isStart ? keyStartNonString : keyEndNonString
        cases.append(
            QueryErrorCase("\(endpoint.rawValue)(foo, foo).orderByKey", childKeyMessage) {
                endpoint.apply($0, "foo", key: "foo").queryOrderedByKey()
            })
        cases.append(QueryErrorCase("\(endpoint.rawValue)(1).orderByKey", nonStringMessage) { endpoint.apply($0, 1).queryOrderedByKey() })
        cases.append(
            QueryErrorCase("\(endpoint.rawValue)(nil).orderByKey", nonStringMessage) { endpoint.apply($0, nil).queryOrderedByKey() })
    }
    // Invalid paths for queryOrdered(byChild:).
    let childPaths: [(String, String)] = [
        ("", childInvalidPath), ("a.b", childInvalidPath), ("$child/foo", childInvalidPath), ("a#b", childInvalidPath),
        ("a[0]", childInvalidPath), ("x]", childInvalidPath), (".info", childInvalidPath), ("a/.priority", childInvalidPath),
        ("$key", "(queryOrderedByChild:) $key is invalid.  Use queryOrderedByKey: instead."),
        (".key", "(queryOrderedByChild:) .key is invalid.  Use queryOrderedByKey: instead."),
        ("$priority", "(queryOrderedByChild:) $priority is invalid.  Use queryOrderedByPriority: instead."),
        (".priority", "(queryOrderedByChild:) .priority is invalid.  Use queryOrderedByPriority: instead."),
        ("$value", "(queryOrderedByChild:) $value is invalid.  Use queryOrderedByValue: instead."),
        (".value", "(queryOrderedByChild:) .value is invalid.  Use queryOrderedByValue: instead."),
        ("/", childEmptyPath), ("///", childEmptyPath),
    ]
    for (path, message) in childPaths {
        cases.append(QueryErrorCase("orderByChild(\"\(path)\")", message) { $0.queryOrdered(byChild: path) })
    }
    // The $key check comes before the multiple-orderBy check (iOS order).
    cases.append(
        QueryErrorCase("orderByKey.orderByChild($key)", "(queryOrderedByChild:) $key is invalid.  Use queryOrderedByKey: instead.") {
            $0.queryOrderedByKey().queryOrdered(byChild: "$key")
        })
    return cases
}()

/// Invalid key arguments.
private let invalidKeys = [".test", "test.", "fo$o", "[what", "ever]", "ha#sh", "/thing", "th/ing", "thing/", ""]

/// Queries that must be accepted (the JS "Can create basic queries", iOS
/// testCanCreateBasicQueries).
private let validQueries: [QueryValidCase] = {
    var cases: [QueryValidCase] = [
        QueryValidCase("limitToLast(10)") { $0.queryLimited(toLast: 10) },
        QueryValidCase("startAt(199).limitToFirst(10)") { $0.queryStarting(atValue: "199").queryLimited(toFirst: 10) },
        QueryValidCase("startAt(199, test).limitToFirst(10)") {
            $0.queryStarting(atValue: "199", childKey: "test").queryLimited(toFirst: 10)
        },
        QueryValidCase("endAt(199).limitToLast(1)") { $0.queryEnding(atValue: "199").queryLimited(toLast: 1) },
        QueryValidCase("startAt(50, test).endAt(100, tree)") {
            $0.queryStarting(atValue: "50", childKey: "test").queryEnding(atValue: "100", childKey: "tree")
        },
        QueryValidCase("startAt(4).endAt(10)") { $0.queryStarting(atValue: "4").queryEnding(atValue: "10") },
        QueryValidCase("startAt().limitToFirst(10)") { $0.queryStarting(atValue: nil).queryLimited(toFirst: 10) },
        QueryValidCase("endAt().limitToLast(10)") { $0.queryEnding(atValue: nil).queryLimited(toLast: 10) },
        QueryValidCase("orderByChild(child)") { $0.queryOrdered(byChild: "child") },
        QueryValidCase("orderByChild(child/deep/path)") { $0.queryOrdered(byChild: "child/deep/path") },
        QueryValidCase("orderByChild(/child/)") { $0.queryOrdered(byChild: "/child/") },
        QueryValidCase("orderByValue") { $0.queryOrderedByValue() },
        QueryValidCase("orderByPriority") { $0.queryOrderedByPriority() },
        QueryValidCase("orderByKey") { $0.queryOrderedByKey() },
        QueryValidCase("limitToFirst(2^31-1)") { $0.queryLimited(toFirst: (1 << 31) - 1) },
        QueryValidCase("limitToLast(2^31-1)") { $0.queryLimited(toLast: (1 << 31) - 1) },
        QueryValidCase("limitToFirst(1)") { $0.queryLimited(toFirst: 1) },
        QueryValidCase("startAt(1).endAt(2).limitToFirst(3)") {
            $0.queryStarting(atValue: 1).queryEnding(atValue: 2).queryLimited(toFirst: 3)
        },
        QueryValidCase("limitToLast(3).startAt(nil, b)") { $0.queryLimited(toLast: 3).queryStarting(atValue: nil, childKey: "b") },
        QueryValidCase("startAt(nil, b).endBefore(1.5, z)") {
            $0.queryStarting(atValue: nil, childKey: "b").queryEnding(beforeValue: 1.5, childKey: "z")
        },
        QueryValidCase("equalTo(nil, b)") { $0.queryEqual(toValue: nil, childKey: "b") },
        QueryValidCase("equalTo(NSNull())") { $0.queryEqual(toValue: NSNull()) },
        QueryValidCase("startAt(NSNumber 3)") { $0.queryStarting(atValue: NSNumber(value: 3)) },
        QueryValidCase("startAfter(foo).orderByKey (iOS accepts this order)") { $0.queryStarting(afterValue: "foo").queryOrderedByKey() },
        QueryValidCase("endBefore(foo).orderByKey (iOS accepts this order)") { $0.queryEnding(beforeValue: "foo").queryOrderedByKey() },
        QueryValidCase("startAt(foo).orderByKey") { $0.queryStarting(atValue: "foo").queryOrderedByKey() },
        QueryValidCase("startAt(1).orderByValue") { $0.queryStarting(atValue: 1).queryOrderedByValue() },
        QueryValidCase("orderByValue.startAt(true)") { $0.queryOrderedByValue().queryStarting(atValue: true) },
        QueryValidCase("orderByKey.startAfter(foo).endBefore(zoo).limitToLast(2)") {
            $0.queryOrderedByKey().queryStarting(afterValue: "foo").queryEnding(beforeValue: "zoo").queryLimited(toLast: 2)
        },
    ]
    for endpoint in Endpoint.allCases {
        for (label, value) in [("true", Argument.bool(true)), ("1", .int(1)), ("foo", .string("foo")), ("nil", .null)] {
            cases.append(
                QueryValidCase("orderByChild(index).\(endpoint.rawValue)(\(label))") {
                    endpoint.apply($0.queryOrdered(byChild: "index"), value.any)
                })
            cases.append(
                QueryValidCase("orderByValue.\(endpoint.rawValue)(\(label), key)") {
                    endpoint.apply($0.queryOrderedByValue(), value.any, key: "key")
                })
        }
        for (label, value) in [("1", Argument.int(1)), ("foo", .string("foo")), ("nil", .null)] {
            cases.append(
                QueryValidCase("orderByPriority.\(endpoint.rawValue)(\(label))") { endpoint.apply($0.queryOrderedByPriority(), value.any) })
        }
        cases.append(QueryValidCase("orderByKey.\(endpoint.rawValue)(foo)") { endpoint.apply($0.queryOrderedByKey(), "foo") })
    }
    return cases
}()

@Suite("Query construction errors, with the iOS reasons")
struct QueryErrorTests {
    /// Checks that `error` is an `.invalidQuery` `DatabaseError` with one of `messages`.
    private func check(_ error: (any Error)?, _ messages: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else {
            Issue.record("\(what): no error", sourceLocation: sourceLocation)
            return
        }
        guard let databaseError = error as? DatabaseError else {
            Issue.record("\(what): not a DatabaseError: \(error)", sourceLocation: sourceLocation)
            return
        }
        #expect(databaseError.code == .invalidQuery, "\(what)", sourceLocation: sourceLocation)
        #expect(
            messages.contains(databaseError.message),
            "\(what): got \"\(databaseError.message)\", expected \(messages.map { "\"\($0)\"" }.joined(separator: " or "))",
            sourceLocation: sourceLocation)
    }

    /// Reports the error of `query` through every channel and checks each.
    private func expectInvalid(
        _ query: DatabaseQuery, _ messages: [String], in db: Database, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let ref = query.ref
        // (a) observe(_:with:withCancel:), for a value and a child observer, and a single-event
        // observer: the cancel block gets the error once, the observer never an event.
        var cancelled: [(any Error)?] = []
        var received = 0
        query.observe(.value, with: { _ in received += 1 }, withCancel: { cancelled.append($0) })
        query.observe(.childAdded, andPreviousSiblingKeyWith: { _, _ in received += 1 }, withCancel: { cancelled.append($0) })
        query.observeSingleEvent(of: .value, with: { _ in received += 1 }, withCancel: { cancelled.append($0) })
        db.drain()
        try querySyncSet(ref, ["a": 1, "b": 2])
        try querySyncSet(ref.child("c"), 3)
        db.drain()
        #expect(received == 0, "the observers of an invalid query receive nothing", sourceLocation: sourceLocation)
        #expect(cancelled.count == 3, "each cancel block runs once", sourceLocation: sourceLocation)
        for error in cancelled { self.check(error, messages, "cancel block", sourceLocation: sourceLocation) }
        // A query accepted by mistake would make the async reads below wait for a loop that
        // nobody drains.
        guard !cancelled.isEmpty else {
            Issue.record("the query was accepted", sourceLocation: sourceLocation)
            return
        }

        // (b) getData(): async throws; the completion form passes the error and no snapshot.
        do {
            let snapshot = try await query.getData()
            Issue.record("getData returned \(snapshot)", sourceLocation: sourceLocation)
        } catch {
            self.check(error, messages, "getData() async", sourceLocation: sourceLocation)
        }
        var completionError: (any Error)?
        var completionSnapshot: DataSnapshot?
        var completions = 0
        query.getData { error, snapshot in
            completions += 1
            completionError = error
            completionSnapshot = snapshot
        }
        db.drain()
        #expect(completions == 1, sourceLocation: sourceLocation)
        #expect(completionSnapshot == nil, sourceLocation: sourceLocation)
        self.check(completionError, messages, "getData(completion:)", sourceLocation: sourceLocation)

        // (c) events(_:): the stream finishes throwing, without an element.
        let stream = query.events(.value, .childAdded)
        db.drain()
        var elements = 0
        do {
            for try await _ in stream { elements += 1 }
            Issue.record("events(_:) finished without an error", sourceLocation: sourceLocation)
        } catch {
            self.check(error, messages, "events(_:)", sourceLocation: sourceLocation)
        }
        #expect(elements == 0, sourceLocation: sourceLocation)
        let values = query.values()
        db.drain()
        do {
            for try await _ in values { elements += 1 }
            Issue.record("values() finished without an error", sourceLocation: sourceLocation)
        } catch {
            self.check(error, messages, "values()", sourceLocation: sourceLocation)
        }
        #expect(elements == 0, sourceLocation: sourceLocation)

        // The plain location of an invalid query is usable.
        var plain: DataSnapshot?
        ref.getData { _, snapshot in plain = snapshot }
        db.drain()
        #expect(plain?.json == ["a": 1, "b": 2, "c": 3], sourceLocation: sourceLocation)
    }

    @Test("an invalid query reports .invalidQuery with the iOS reason to cancel blocks, getData and events", arguments: invalidQueries)
    func invalid(_ c: QueryErrorCase) async throws {
        let db = try manualDatabase()
        defer { db.close() }
        try await self.expectInvalid(c.build(db.reference(withPath: "q")), c.messages, in: db)
    }

    @Test("an invalid query stays invalid, with its first error, whatever is chained after it", arguments: invalidQueries)
    func firstErrorWins(_ c: QueryErrorCase) throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "q")
        let chained = c.build(ref).queryOrderedByKey().queryOrderedByValue().queryLimited(toFirst: 0).queryStarting(atValue: ["x": 1])
            .queryLimited(toLast: 5)
        var error: (any Error)?
        chained.getData { e, _ in error = e }
        db.drain()
        self.check(error, c.messages, "getData of the chained query")
    }

    @Test(
        "an invalid key argument is rejected by every endpoint method",
        arguments: invalidKeys, [Endpoint.startAt, .startAfter, .endAt, .endBefore, .equalTo].map(\.rawValue))
    func invalidKey(key: String, method: String) async throws {
        let endpoint = try #require(Endpoint(rawValue: method))
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "q")
        try await self.expectInvalid(endpoint.apply(ref, "value", key: key), [invalidChildKey(endpoint.iosName)], in: db)
        try await self.expectInvalid(
            endpoint.apply(ref.queryOrdered(byChild: "x"), 1, key: key), [invalidChildKey(endpoint.iosName)], in: db)
    }

    @Test("valid queries (JS 'can create basic queries', iOS testCanCreateBasicQueries) never error", arguments: validQueries)
    func valid(_ c: QueryValidCase) async throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "q")
        try querySyncSet(ref, ["a": 1, "b": 2])
        db.drain()
        let query = c.build(ref)
        var cancelled: [any Error] = []
        var values = 0
        query.observe(.value, with: { _ in values += 1 }, withCancel: { cancelled.append($0) })
        db.drain()
        #expect(cancelled.isEmpty, "\(cancelled)")
        #expect(values == 1, "the initial value event")
        var error: (any Error)?
        var snapshot: DataSnapshot?
        query.getData {
            error = $0
            snapshot = $1
        }
        db.drain()
        #expect(error == nil)
        #expect(snapshot != nil)
        let stream = query.events(.value)
        db.drain()
        var iterator = stream.makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.type == .value)
    }

    @Test("the largest limit, 2^31-1, is accepted and shows everything")
    func largestLimit() throws {
        let (db, ref) = try manualDatabase(holding: ["a": 1, "b": 2, "c": 3], at: "q")
        defer { db.close() }
        expectWindow(ref.queryLimited(toFirst: (1 << 31) - 1), db, ["a", "b", "c"])
        expectWindow(ref.queryLimited(toLast: (1 << 31) - 1), db, ["a", "b", "c"])
        expectWindow(ref.queryOrderedByValue().queryLimited(toLast: UInt(Int32.max)), db, ["a", "b", "c"])
    }

    @Test("building queries never traps, whatever the arguments")
    func buildersNeverCrash() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "q")
        let values: [Any?] = [
            nil, NSNull(), true, false, 0, -1, 1.5, Double.nan, Double.infinity, "", "x", "$key", [1, 2], ["a": 1], Date(),
            NSNumber(value: 7), [Any?](), Data([1, 2]),
        ]
        let keys: [String?] = [nil, "", "a", ".", "a/b", "$", "[", "-2147483648", "2147483647"]
        let limits: [UInt] = [0, 1, 2, (1 << 31) - 1, 1 << 31, UInt.max]
        var queries: [DatabaseQuery] = []
        for value in values {
            for key in keys {
                for endpoint in Endpoint.allCases {
                    for base in [
                        ref as DatabaseQuery, ref.queryOrderedByKey(), ref.queryOrderedByValue(), ref.queryOrdered(byChild: "c"),
                        ref.queryOrderedByPriority(),
                    ] {
                        queries.append(endpoint.apply(base, value, key: key))
                    }
                }
            }
        }
        for limit in limits {
            queries.append(ref.queryLimited(toFirst: limit).queryLimited(toLast: limit))
        }
        for path in ["", "/", ".", "$", "a/b/c", "a//b", "[x]", "$key/x", ".priority/x", "\u{0}", String(repeating: "x", count: 1000)] {
            queries.append(ref.queryOrdered(byChild: path).queryOrdered(byChild: path))
        }
        // NaN and infinity are not valid endpoint values (no iOS row: the message names the method).
        for value in [Double.nan, Double.infinity, -Double.infinity] {
            for endpoint in Endpoint.allCases {
                var error: (any Error)?
                endpoint.apply(ref.queryOrderedByValue(), value).getData { e, _ in error = e }
                db.drain()
                let databaseError = error as? DatabaseError
                #expect(databaseError?.code == .invalidQuery, "\(endpoint.rawValue)(\(value))")
                #expect(
                    databaseError?.message.contains(endpoint.iosName + ":") == true,
                    "\(endpoint.rawValue)(\(value)): \(String(describing: databaseError))")
            }
        }
        // Every one of them can be read without trapping.
        var completions = 0
        for query in queries { query.getData { _, _ in completions += 1 } }
        db.drain()
        #expect(completions == queries.count)
    }
}
