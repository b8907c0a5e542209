import ArgumentParser
import Canopy
import CanopyCore

/// The query flags of `get` and `observe`, applied with the library's query builders (and
/// validated by them, with their messages).
struct QueryOptions: ParsableArguments {
    @Flag(name: .customLong("order-by-key"), help: "Order the children by key.")
    var orderByKey = false

    @Flag(name: .customLong("order-by-value"), help: "Order the children by value.")
    var orderByValue = false

    @Option(
        name: .customLong("order-by-child"), help: ArgumentHelp("Order the children by the value at this child path.", valueName: "PATH"))
    var orderByChild: String?

    @Flag(name: .customLong("order-by-priority"), help: "Order the children by priority.")
    var orderByPriority = false

    @Option(name: .customLong("limit-to-first"), help: ArgumentHelp("Only the first N children in query order.", valueName: "N"))
    var limitToFirst: UInt?

    @Option(name: .customLong("limit-to-last"), help: ArgumentHelp("Only the last N children in query order.", valueName: "N"))
    var limitToLast: UInt?

    @Option(
        name: .customLong("start-at"), parsing: .upToNextOption,
        help: ArgumentHelp("Children from this JSON value on (a second value: from this key among equal values).", valueName: "json [key]"))
    var startAt: [String] = []

    @Option(
        name: .customLong("start-after"), parsing: .upToNextOption,
        help: ArgumentHelp("Children after this JSON value (and key).", valueName: "json [key]"))
    var startAfter: [String] = []

    @Option(
        name: .customLong("end-at"), parsing: .upToNextOption,
        help: ArgumentHelp("Children up to this JSON value (and key).", valueName: "json [key]"))
    var endAt: [String] = []

    @Option(
        name: .customLong("end-before"), parsing: .upToNextOption,
        help: ArgumentHelp("Children before this JSON value (and key).", valueName: "json [key]"))
    var endBefore: [String] = []

    @Option(
        name: .customLong("equal-to"), parsing: .upToNextOption,
        help: ArgumentHelp("Children equal to this JSON value (and key).", valueName: "json [key]"))
    var equalTo: [String] = []

    /// Whether any flag is set.
    var isEmpty: Bool {
        !self.orderByKey && !self.orderByValue && self.orderByChild == nil && !self.orderByPriority
            && self.limitToFirst == nil && self.limitToLast == nil
            && self.startAt.isEmpty && self.startAfter.isEmpty && self.endAt.isEmpty && self.endBefore.isEmpty && self.equalTo.isEmpty
    }

    func validate() throws {
        // Build the query against a throwaway database: the builders' own errors.
        if self.isEmpty { return }
        var configuration = Database.Configuration()
        configuration.loopMode = .manual
        let db = try Database.inMemory(configuration)
        defer { db.close() }
        let query: DatabaseQuery
        do { query = try self.apply(to: db.reference()) } catch { throw ValidationError(error.message) }
        let failure = SendableBox<(any Error)?>(nil)
        query.observeSingleEvent(of: .value, with: { _ in }, withCancel: { error in failure.value = error })
        db.drain()
        if let error = failure.value { throw ValidationError(CLIError.from(error).message) }
    }

    /// `reference` with the flags applied, in the order order, limits, bounds.
    func apply(to reference: DatabaseReference) throws(CLIError) -> DatabaseQuery {
        var query: DatabaseQuery = reference
        let orders = [self.orderByKey, self.orderByValue, self.orderByChild != nil, self.orderByPriority].filter { $0 }.count
        if orders > 1 { throw .usage("Use one of --order-by-key, --order-by-value, --order-by-child and --order-by-priority.") }
        if self.limitToFirst != nil && self.limitToLast != nil {
            throw .usage("Use --limit-to-first or --limit-to-last, not both: a query has one limit.")
        }
        if !self.startAt.isEmpty && !self.startAfter.isEmpty {
            throw .usage("Use --start-at or --start-after, not both: a query has one start.")
        }
        if !self.endAt.isEmpty && !self.endBefore.isEmpty {
            throw .usage("Use --end-at or --end-before, not both: a query has one end.")
        }
        if !self.equalTo.isEmpty, let bound = self.rangeFlag {
            throw .usage("Use --equal-to or \(bound), not both: --equal-to is both the start and the end.")
        }
        if self.orderByKey { query = query.queryOrderedByKey() }
        if self.orderByValue { query = query.queryOrderedByValue() }
        if let child = self.orderByChild { query = query.queryOrdered(byChild: child) }
        if self.orderByPriority { query = query.queryOrderedByPriority() }
        if let n = self.limitToFirst { query = query.queryLimited(toFirst: n) }
        if let n = self.limitToLast { query = query.queryLimited(toLast: n) }
        for bound in self.bounds where !bound.values.isEmpty {
            let (value, key) = try Self.bound(bound.values, flag: bound.flag)
            query = bound.apply(query, value, key)
        }
        return query
    }

    /// The bound flags in the order they apply (the range flags, then `--equal-to`): each one's
    /// name, its values (none when it is not set) and the builder it stands for.
    private var bounds: [(flag: String, values: [String], apply: (DatabaseQuery, Any?, String?) -> DatabaseQuery)] {
        [
            ("--start-at", self.startAt, { $0.queryStarting(atValue: $1, childKey: $2) }),
            ("--start-after", self.startAfter, { $0.queryStarting(afterValue: $1, childKey: $2) }),
            ("--end-at", self.endAt, { $0.queryEnding(atValue: $1, childKey: $2) }),
            ("--end-before", self.endBefore, { $0.queryEnding(beforeValue: $1, childKey: $2) }),
            ("--equal-to", self.equalTo, { $0.queryEqual(toValue: $1, childKey: $2) }),
        ]
    }

    /// The first range flag set (`--start-at`, `--start-after`, `--end-at`, `--end-before`), if any.
    private var rangeFlag: String? {
        self.bounds.dropLast().first { !$0.values.isEmpty }?.flag
    }

    /// A bound's JSON value (as the builders take it) and optional key.
    static func bound(_ values: [String], flag: String) throws(CLIError) -> (Any?, String?) {
        guard values.count <= 2 else { throw .usage("\(flag) takes a JSON value and optionally a key, not \(values.count) values.") }
        let text = values[0]
        let json: JSONValue
        do {
            var builder = JSONValueBuilder()
            json = try JSONParser().parse(text, into: &builder)
        } catch {
            throw .usage("\(flag): \(text) is not a JSON value (quote strings: '\"\(text)\"').")
        }
        let value: Any?
        switch json {
        case .null: value = nil
        case .bool(let b): value = b
        case .int(let i): value = Int(i)
        case .double(let d): value = d
        case .string(let s): value = s
        case .array, .object: throw .usage("\(flag): a query bound is a string, number, boolean or null, not \(text).")
        }
        return (value, values.count == 2 ? values[1] : nil)
    }
}

/// A mutable box for a value set by a callback that runs while the caller waits (``Database/drain()``).
// @unchecked Sendable: written and read on the same thread, around a synchronous drain().
final class SendableBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
