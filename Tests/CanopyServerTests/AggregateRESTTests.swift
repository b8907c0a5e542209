import CanopyCore
import CanopyServer
import Foundation
import Testing

/// `aggregate=` on REST reads and event streams, over a real loopback socket.
@Suite("Aggregates over REST and event streams")
struct AggregateRESTTests {
    static let ratings = #"""
        {"a": {"stars": 5, "text": "great"}, "b": {"stars": 3}, "c": {"stars": 4.5}, "d": {"stars": 1},
         "e": {"stars": "n/a"}, "f": {"text": "no stars"}}
        """#
    static let all = "aggregate=count,sum(stars),avg(stars),min(stars),max(stars)"

    @Test("GET returns the aggregate of the query's range as one JSON object")
    func reads() async throws {
        try await withLiveServer(makeServer()) { port in
            #expect(try await StreamTests.request(port, "PUT", "/ratings.json", Self.ratings).status == 200)
            // The whole location: every child counts; only numbers are summed.
            let whole = try await StreamTests.request(port, "GET", "/ratings.json?\(Self.all)")
            #expect(whole.status == 200)
            #expect(try json(whole.body) == ["count": 6, "sum(stars)": 13.5, "avg(stars)": 3.375, "min(stars)": 1, "max(stars)": 5])
            // A range of an order: stars >= 3 (the string "n/a" sorts after numbers, so endAt bounds it out).
            let ranged = try await StreamTests.request(port, "GET", "/ratings.json?orderBy=%22stars%22&startAt=3&endAt=5&\(Self.all)")
            #expect(
                try json(ranged.body) == [
                    "count": 3, "sum(stars)": 12.5, "avg(stars)": .double(12.5 / 3), "min(stars)": 3, "max(stars)": 5,
                ])
            // Integers only: the sum stays an integer.
            let ints = try await StreamTests.request(
                port, "GET", "/ratings.json?orderBy=%22$key%22&startAt=%22a%22&endAt=%22b%22&aggregate=sum(stars)")
            #expect(ints.body == #"{"sum(stars)":8}"#)
            // A limit aggregates the children the query shows: f (no stars, so null, first) and d.
            let limited = try await StreamTests.request(
                port, "GET", "/ratings.json?orderBy=%22stars%22&limitToFirst=2&aggregate=count,max(stars)")
            #expect(try json(limited.body) == ["count": 2, "max(stars)": 1])
            // No numbers: sum 0, average and extremes null.
            let none = try await StreamTests.request(port, "GET", "/ratings.json?orderBy=%22$key%22&equalTo=%22f%22&\(Self.all)")
            #expect(try json(none.body) == ["count": 1, "sum(stars)": 0, "avg(stars)": .null, "min(stars)": .null, "max(stars)": .null])
            // A missing location has nothing to count.
            let missing = try await StreamTests.request(port, "GET", "/nothing.json?aggregate=count,avg(x)")
            #expect(try json(missing.body) == ["count": 0, "avg(x)": .null])
            // Nested fields and the child's own value.
            #expect(
                try await StreamTests.request(port, "PUT", "/scores.json", #"{"u1": 10, "u2": 32, "u3": {"best": {"v": 7}}}"#).status == 200
            )
            let own = try await StreamTests.request(port, "GET", "/scores.json?aggregate=sum($value),max(best/v)")
            #expect(try json(own.body) == ["sum($value)": 42, "max(best/v)": 7])
        }
    }

    @Test("bad aggregate parameters are 400 with a message naming the part; nothing is written")
    func badRequests() async throws {
        try await withLiveServer(makeServer()) { port in
            #expect(try await StreamTests.request(port, "PUT", "/ratings.json", Self.ratings).status == 200)
            let cases: [(String, String)] = [
                ("/ratings.json?aggregate=median(stars)", "median"),
                ("/ratings.json?aggregate=sum()", "sum()"),
                ("/ratings.json?aggregate=count,avg", "avg"),
                ("/ratings.json?aggregate=sum(a.b)", "sum(a.b)"),
                ("/ratings.json?aggregate=", "at least one"),
                ("/ratings.json?aggregate=count&shallow=true", "shallow"),
                ("/ratings.json?aggregate=count&format=export", "format=export"),
                ("/ratings.json?aggregate=count&startAt=3", "orderBy"),
            ]
            for (target, part) in cases {
                let reply = try await StreamTests.request(port, "GET", target)
                #expect(reply.status == 400, "\(target): \(reply.status) \(reply.body)")
                guard case .object(let o) = try json(reply.body), case .string(let message)? = o["error"] else {
                    Issue.record("\(target): no error object: \(reply.body)")
                    continue
                }
                #expect(message.contains(part), "\(target): \(message)")
            }
            let put = try await StreamTests.request(port, "PUT", "/ratings/a.json?aggregate=count", "1")
            #expect(put.status == 400 && put.body.contains("aggregate"), "\(put.body)")
            #expect(try json(try await StreamTests.request(port, "GET", "/ratings.json").body) == json(Self.ratings))
        }
    }

    @Test("rules: an aggregate needs the read permission of its query")
    func rules() async throws {
        let server = RulesEnforcementTests.guardedServer()
        try await withLiveServer(server) { port in
            let admin = RulesEnforcementTests.admin
            let seed = #"{"public": 1, "secret": {"a": {"n": 1}, "b": {"n": 2}}}"#
            #expect(try await StreamTests.request(port, "PUT", "/.json", seed, headers: admin).status == 200)
            for target in ["/secret.json?aggregate=count", "/secret.json?aggregate=sum(n)", "/.json?aggregate=count"] {
                let reply = try await StreamTests.request(port, "GET", target)
                #expect(reply.status == 401, "\(target)")
                #expect(!reply.body.contains("count") && !reply.body.contains("3"), "\(target) leaks nothing: \(reply.body)")
                let stream = try await EventStreamClient.open(port: port, target)
                #expect(stream.head.status == 401, "stream \(target)")
                await stream.connection.close()
            }
            let allowed = try await StreamTests.request(port, "GET", "/secret.json?aggregate=count,sum(n)", headers: admin)
            #expect(try json(allowed.body) == ["count": 2, "sum(n)": 3])
        }
    }

    @Test("an aggregate stream puts the value, then a new value on each write that changes it, and nothing on writes that do not")
    func stream() async throws {
        try await withLiveServer(makeServer()) { port in
            #expect(try await StreamTests.request(port, "PUT", "/ratings.json", Self.ratings).status == 200)
            let target = "/ratings.json?orderBy=%22stars%22&startAt=3&endAt=5&aggregate=count,sum(stars),avg(stars)"
            let stream = try await EventStreamClient.open(port: port, target)
            #expect(stream.head.status == 200)
            try await StreamTests.expectEvent(stream, "put", "/", ["count": 3, "sum(stars)": 12.5, "avg(stars)": .double(12.5 / 3)])
            // Moves into the range.
            try await StreamTests.request(port, "PUT", "/ratings/d/stars.json", "4")
            try await StreamTests.expectEvent(stream, "put", "/", ["count": 4, "sum(stars)": 16.5, "avg(stars)": .double(16.5 / 4)])
            // Writes that leave the aggregate as it is: another field, a child out of range, elsewhere.
            try await StreamTests.request(port, "PUT", "/ratings/a/text.json", #""superb""#)
            try await StreamTests.request(port, "PUT", "/ratings/z.json", #"{"stars": 0}"#)
            try await StreamTests.request(port, "PUT", "/other.json", "1")
            // Leaves the range: the next event is this one, so none came for the writes above.
            try await StreamTests.request(port, "PATCH", "/ratings.json", #"{"a/stars": 10, "c": null}"#)
            try await StreamTests.expectEvent(stream, "put", "/", ["count": 2, "sum(stars)": 7, "avg(stars)": 3.5])
            // A set above the location replaces everything.
            try await StreamTests.request(port, "PUT", "/.json", #"{"ratings": {"x": {"stars": 3}}}"#)
            try await StreamTests.expectEvent(stream, "put", "/", ["count": 1, "sum(stars)": 3, "avg(stars)": 3])
            await stream.connection.close()
        }
    }
}
