/// The writes of the crash test: a deterministic mix of sets, multi-path updates, removals,
/// priorities and increments over a small tree, some large enough to span several pages.
public enum CrashWorkload {
    public enum Operation: Sendable, Equatable {
        case set(path: String, value: [String: String])
        case update(path: String, values: [String: String?])
        case remove(path: String)
        case increment(path: String)
        case setWithPriority(path: String, value: String, priority: Double)
    }

    public static func operations(seed: UInt64, count: Int) -> [Operation] {
        var random = SeededGenerator(seed: seed)
        var operations: [Operation] = []
        operations.reserveCapacity(count)
        for index in 0..<count {
            let keyIndex = Int.random(in: 0..<24, using: &random)
            let key = "k\(keyIndex)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40:
                let size = Int.random(in: 0..<10, using: &random) == 0 ? 3_000 : 8
                operations.append(.set(path: "items/\(key)", value: ["n": "\(index)", "text": String(repeating: "x", count: size)]))
            case 40..<60:
                let other = "k\((keyIndex + Int.random(in: 1..<24, using: &random)) % 24)"
                operations.append(.update(path: "items", values: ["\(key)/n": "\(index)", "\(other)": nil]))
            case 60..<70:
                operations.append(.remove(path: "items/\(key)"))
            case 70..<90:
                operations.append(.increment(path: "counters/c\(index % 3)"))
            default:
                operations.append(.setWithPriority(path: "ranked/\(key)", value: "v\(index)", priority: Double(index % 7)))
            }
        }
        return operations
    }
}
