import Testing

@testable import CanopyServer

/// Reassembly of a long-poll client's messages from its segments (``LongPollSegments``) and the
/// reading of its requests (``LongPollRequest``).
@Suite("Long-poll segments")
struct LongPollSegmentsTests {
    typealias Segment = LongPollSegments.Segment

    static func segments(_ text: String, from first: Int, size: Int) -> [Segment] {
        let base64 = LongPollClient.webSafeBase64(text)
        var out: [Segment] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            out.append(Segment(number: first + out.count, total: 0, data: rest.prefix(size)))
            rest = rest.dropFirst(size)
        }
        return out.map { Segment(number: $0.number, total: out.count, data: $0.data) }
    }

    @Test("in order, out of order, repeated, several per message")
    func reassembly() throws {
        var assembler = LongPollSegments(maxBytes: 1 << 20)
        #expect(try assembler.receive(Self.segments("{\"a\":1}", from: 0, size: 1840)) == ["{\"a\":1}"])
        let long = "{\"b\":\"" + String(repeating: "ü€", count: 500) + "\"}"
        let parts = Self.segments(long, from: 1, size: 100)
        #expect(parts.count > 3)
        #expect(try assembler.receive(Array(parts.dropFirst())) == [])
        #expect(assembler.next == 1)
        #expect(try assembler.receive([parts[0], parts[0]]) == [long])
        #expect(try assembler.receive([parts[2]]) == [], "a segment taken already is ignored")
        let next = parts.count + 1
        #expect(
            try assembler.receive(Self.segments("[1]", from: next, size: 1840) + Self.segments("[2]", from: next + 1, size: 1840)) == [
                "[1]", "[2]",
            ])
    }

    @Test("inconsistent, undecodable and too many segments are refused")
    func refusals() {
        var inconsistent = LongPollSegments(maxBytes: 1 << 20)
        #expect(throws: LongPollSegments.Failure.inconsistent(0)) {
            try inconsistent.receive([Segment(number: 0, total: 2, data: "e30"), Segment(number: 1, total: 3, data: "e30")])
        }
        var undecodable = LongPollSegments(maxBytes: 1 << 20)
        #expect(throws: LongPollSegments.Failure.undecodable(0)) { try undecodable.receive([Segment(number: 0, total: 1, data: "_w..")]) }
        var small = LongPollSegments(maxBytes: 10)
        #expect(throws: LongPollSegments.Failure.tooLarge) { try small.receive([Segment(number: 5, total: 1, data: "e30e30e30e30")]) }
        #expect(LongPollSegments.decode("eyJhIjoxfQ") == "{\"a\":1}")
        #expect(LongPollSegments.decode("eyJhIjoxfQ..") == "{\"a\":1}")
    }

    @Test("requests: start, poll with segments, disconnect frame, disconnect; bad ones named")
    func requests() throws {
        #expect(
            try LongPollRequest(parameters: ["start": "t", "ser": "1", "cb": "12", "v": "5", "ns": "x", "ls": "old"])
                == .start(callback: "12", namespace: "x", lastSession: "old"))
        #expect(
            try LongPollRequest(parameters: [
                "id": "a1", "pw": "b2", "seg0": "3", "ts0": "2", "d0": "e3-_", "seg1": "4", "ts1": "2", "d1": "0.",
            ])
                == .poll(
                    id: "a1", password: "b2",
                    segments: [Segment(number: 3, total: 2, data: "e3-_"), Segment(number: 4, total: 2, data: "0.")]))
        #expect(try LongPollRequest(parameters: ["id": "a1", "pw": "b2", "dframe": "t"]) == .disconnectFrame(id: "a1", password: "b2"))
        #expect(try LongPollRequest(parameters: ["id": "a1", "pw": "b2", "disconn": "t"]) == .disconnect(id: "a1", password: "b2"))
        for bad: [String: String] in [
            [:], ["start": "t"], ["start": "t", "cb": "1;alert(1)"], ["id": "a"], ["id": "a\"", "pw": "b"],
            ["id": "a", "pw": "b", "seg0": "0", "ts0": "0", "d0": "e30"], ["id": "a", "pw": "b", "seg0": "-1", "ts0": "1", "d0": "e30"],
            ["id": "a", "pw": "b", "seg0": "0", "ts0": "1", "d0": "e 30"],
        ] {
            #expect(throws: LongPollRequest.Invalid.self, "\(bad)") { try LongPollRequest(parameters: bad) }
        }
    }
}
