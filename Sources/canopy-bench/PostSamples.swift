/// The posts of a run that are read back at the end: 16 of its `n` indices (drawn with seed 11),
/// and the posts written at them, noted as the run goes.
struct PostSamples {
    private let indices: [Int]
    private var next = 0
    private(set) var posts: [(key: String, post: PostGenerator.Post)] = []

    init(below n: Int) {
        var rng = BenchRNG(seed: 11)
        self.indices = rng.sampleIndices(16, below: n)
    }

    /// Keeps post `i` (written at `key`) if it is a sample; `i` must increase from call to call.
    mutating func note(_ i: Int, key: @autoclosure () -> String, post: PostGenerator.Post) {
        guard self.next < self.indices.count && self.indices[self.next] == i else { return }
        self.posts.append((key(), post))
        self.next += 1
    }
}
