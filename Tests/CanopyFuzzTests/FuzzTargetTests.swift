import CanopyFuzzTargets
import Foundation
import Testing

/// Runs each fuzz target over its seed corpus, its regressions (inputs that once failed) and a
/// bounded number of seeded mutations. `CANOPY_FUZZ_ITERATIONS` runs more; libFuzzer runs them
/// for hours (Tests/Fuzz/README.md).
@Suite struct FuzzTargetTests {
    static let fuzzDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz").path
    static let iterations = ProcessInfo.processInfo.environment["CANOPY_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 2_000

    @Test(arguments: FuzzTarget.all.map(\.name))
    func target(_ name: String) async throws {
        let target = try #require(FuzzTarget.named(name))
        let corpus = CorpusFiles.read(Self.fuzzDirectory + "/Corpus/" + name)
        #expect(corpus.count >= 4, "the seed corpus in Tests/Fuzz/Corpus/\(name) is missing")
        let regressions = CorpusFiles.read(Self.fuzzDirectory + "/Regressions/" + name)
        let outcome = await onThread { target.run(corpus: regressions + corpus, iterations: Self.iterations, seed: 20_261_122) }
        if let (input, failure) = outcome.failure {
            Issue.record("\(name): \(failure)\ninput (\(input.count) bytes): \(input.map { String($0, radix: 16) }.joined(separator: " "))")
        }
        #expect(outcome.executed == regressions.count + corpus.count + Self.iterations)
    }

    /// The committed corpus is what `canopy-fuzz seeds` writes (regenerate it when a format
    /// changes), so the seeds stay valid inputs.
    @Test(arguments: FuzzTarget.all.map(\.name))
    func corpusHoldsTheSeeds(_ name: String) throws {
        let target = try #require(FuzzTarget.named(name))
        let corpus = CorpusFiles.read(Self.fuzzDirectory + "/Corpus/" + name)
        for seed in target.seeds {
            #expect(
                corpus.contains(seed),
                "Tests/Fuzz/Corpus/\(name) lacks a seed of \(seed.count) bytes: run canopy-fuzz seeds Tests/Fuzz/Corpus")
        }
    }

    /// A broken property is reported with its input, not swallowed.
    @Test func aBrokenPropertyIsReported() {
        let broken = FuzzTarget(name: "broken") { bytes throws(FuzzFailure) in
            if bytes.contains(0x41) { throw FuzzFailure("saw an A") }
        }
        let outcome = broken.run(corpus: [Array("xyz".utf8)], iterations: 10_000, seed: 7)
        #expect(outcome.failure?.failure.message == "saw an A")
        #expect(outcome.failure?.input.contains(0x41) == true)
    }
}

/// Runs `body` on a thread of its own: the targets block while the server answers on the
/// concurrency pool, so they must not hold one of the pool's threads.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
