import CanopyCore
import Testing

@Suite("Hashing agrees with numeric equality")
struct HashingTests {
    @Test(
        "equal numbers hash alike across Int64 and Double, for JSONValue and LeafValue",
        arguments: [
            (Int64(1), 1.0), (Int64(0), -0.0), (Int64(-5), -5.0), (Int64(1) << 53, 9_007_199_254_740_992.0),
        ])
    func equalNumbersHashAlike(int: Int64, double: Double) {
        #expect(JSONValue.int(int) == JSONValue.double(double))
        #expect(JSONValue.int(int).hashValue == JSONValue.double(double).hashValue)
        #expect(LeafValue.int(int) == LeafValue.double(double))
        #expect(LeafValue.int(int).hashValue == LeafValue.double(double).hashValue)
        #expect(Set([JSONValue.int(int), JSONValue.double(double)]).count == 1)
    }

    @Test("numbers that differ stay distinct in a set, even beyond 2^53")
    func distinctNumbers() {
        let big = Int64(1) << 53
        #expect(JSONValue.int(big + 1) != JSONValue.double(Double(big)))
        #expect(Set([JSONValue.int(big + 1), JSONValue.double(Double(big)), JSONValue.int(big)]).count == 2)
        #expect(Set([LeafValue.int(1), LeafValue.double(1.5), LeafValue.bool(true), LeafValue.string("1")]).count == 4)
    }
}
