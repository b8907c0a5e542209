extension FuzzTarget {
    /// What a run of ``run(corpus:iterations:seed:)`` did.
    public struct Outcome: Sendable {
        public var executed = 0
        /// The first input that broke a property, and how.
        public var failure: (input: [UInt8], failure: FuzzFailure)?
    }

    /// Runs every corpus entry, then `iterations` mutations of them; stops at the first failure.
    public func run(corpus: [[UInt8]], iterations: Int, seed: UInt64) -> Outcome {
        var outcome = Outcome()
        for input in corpus {
            outcome.executed += 1
            do { try self.run(input) } catch {
                outcome.failure = (input, error)
                return outcome
            }
        }
        let pool = corpus.isEmpty ? [[UInt8]()] : corpus
        var mutator = Mutator(seed: seed, dictionary: self.dictionary)
        var previous = pool[0]
        for i in 0..<iterations {
            // Mostly fresh mutations of a corpus entry, sometimes a mutation of the last input.
            let base = i % 4 == 3 ? previous : pool[i % pool.count]
            let input = mutator.mutate(base, corpus: pool)
            previous = input
            outcome.executed += 1
            do { try self.run(input) } catch {
                outcome.failure = (input, error)
                return outcome
            }
        }
        return outcome
    }
}
