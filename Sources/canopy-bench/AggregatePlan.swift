/// B14's data and updates, shared by the scenario and its floor so that both run the same plan:
/// `children` children (`i0000000`, …) with a random score and a rating, then `updates` random
/// children each given a new score and rating. Scores fall in 0..<1,000,000, so about half the
/// children lie in ``range`` and updates move them across its bounds. Ratings are quarters
/// (0 to 5): dyadic doubles, so every sum is exact and the checks can be too.
struct AggregatePlan {
    struct Update {
        let index: Int
        let score: Int
        let quarters: Int
    }

    /// The score range the live aggregate covers.
    static let range = 250_000...750_000

    var keys: [String] = []
    var scores: [Int] = []
    var quarters: [Int] = []
    var updates: [Update] = []

    init(children: Int, updates: Int) {
        var rng = BenchRNG(seed: 14)
        self.keys.reserveCapacity(children)
        self.scores.reserveCapacity(children)
        self.quarters.reserveCapacity(children)
        for i in 0..<children {
            self.keys.append(paddedKey(UInt8(ascii: "i"), i, digits: 7))
            self.scores.append(rng.next(below: 1_000_000))
            self.quarters.append(rng.next(below: 21))
        }
        self.updates.reserveCapacity(updates)
        for _ in 0..<updates {
            self.updates.append(Update(index: rng.next(below: children), score: rng.next(below: 1_000_000), quarters: rng.next(below: 21)))
        }
    }

    /// The brute-force recount after every update: the children in range, and the sum of their
    /// ratings in quarters.
    func recount() -> (count: Int, quarters: Int) {
        var scores = self.scores
        var quarters = self.quarters
        for update in self.updates {
            scores[update.index] = update.score
            quarters[update.index] = update.quarters
        }
        var result = (count: 0, quarters: 0)
        for i in scores.indices where Self.range.contains(scores[i]) {
            result.count += 1
            result.quarters += quarters[i]
        }
        return result
    }
}
