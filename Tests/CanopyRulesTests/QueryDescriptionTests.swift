import CanopyCore
import CanopyRules
import Testing

/// What `query.*` shows of an engine query built by the query builders.
@Suite("QueryDescription from query parameters")
struct QueryDescriptionTests {
    func describe(_ build: (inout QueryBuilder) throws -> Void) throws -> QueryDescription {
        var builder = QueryBuilder()
        try build(&builder)
        return QueryDescription(builder.params)
    }

    @Test("equalTo, with or without a child key, is query.equalTo")
    func equalTo() throws {
        var d = try self.describe {
            try $0.order(by: .child([ChildKey("owner")]))
            try $0.equal(.string("alice"), childKey: nil)
        }
        #expect(d.order == .child("owner"))
        #expect(d.equalTo == .some(.string("alice")) && d.startAt == nil && d.endAt == nil)
        d = try self.describe {
            try $0.order(by: .value)
            try $0.equal(.int(3), childKey: "k")
        }
        #expect(d.equalTo == .some(.int(3)))
        d = try self.describe {
            try $0.order(by: .key)
            try $0.equal(.string("b"), childKey: nil)
        }
        #expect(d.equalTo == .some(.string("b")))
    }

    @Test("a range, or bounds at different keys, is startAt and endAt")
    func range() throws {
        var d = try self.describe {
            try $0.order(by: .child([ChildKey("score")]))
            try $0.start(.int(1), childKey: nil, after: false)
            try $0.end(.int(5), childKey: nil, before: false)
            try $0.limit(10, first: true)
        }
        #expect(d.equalTo == nil && d.startAt == .some(.int(1)) && d.endAt == .some(.int(5)) && d.limitToFirst == 10)
        d = try self.describe {
            try $0.order(by: .value)
            try $0.start(.int(1), childKey: "a", after: false)
            try $0.end(.int(1), childKey: "z", before: false)
        }
        #expect(d.equalTo == nil && d.startAt == .some(.int(1)) && d.endAt == .some(.int(1)))
        d = try self.describe {
            try $0.order(by: .value)
            try $0.start(.int(1), childKey: nil, after: true)
            try $0.end(.int(1), childKey: nil, before: false)
        }
        #expect(d.equalTo == nil)
    }
}
