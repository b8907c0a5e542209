import CanopyTestSupport

/// A small byte mutator for running the targets without libFuzzer (tests, and plain builds):
/// bit flips, byte changes, insertions, deletions, duplicated ranges, dictionary tokens and
/// splices of other corpus entries. Seeded, so a run replays exactly.
public struct Mutator {
    private var random: SeededGenerator
    private let tokens: [[UInt8]]
    /// The largest input it produces.
    public var maxLength = 4096

    public init(seed: UInt64, dictionary: [String]) {
        self.random = SeededGenerator(seed: seed)
        self.tokens = dictionary.map { Array($0.utf8) }
    }

    private mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(self.random.next() % UInt64(n)) }

    /// One to four mutations of `input`; `corpus` supplies splices.
    public mutating func mutate(_ input: [UInt8], corpus: [[UInt8]]) -> [UInt8] {
        var out = input
        for _ in 0...self.below(4) {
            let at = self.below(out.count + 1)
            switch self.below(8) {
            case 0 where !out.isEmpty:
                out[min(at, out.count - 1)] ^= UInt8(1) << UInt8(self.below(8))
            case 1 where !out.isEmpty:
                out[min(at, out.count - 1)] = [0, 0x7F, 0x80, 0xFF, 0x22, 0x5C, 0x2F, 0x2E][self.below(8)]
            case 2:
                out.insert(UInt8(truncatingIfNeeded: self.random.next()), at: at)
            case 3 where !out.isEmpty:
                let start = min(at, out.count - 1)
                out.removeSubrange(start..<min(out.count, start + 1 + self.below(8)))
            case 4 where !out.isEmpty:
                let start = min(at, out.count - 1)
                let piece = out[start..<min(out.count, start + 1 + self.below(16))]
                out.insert(contentsOf: Array(piece), at: self.below(out.count + 1))
            case 5 where !self.tokens.isEmpty:
                out.insert(contentsOf: self.tokens[self.below(self.tokens.count)], at: at)
            case 6 where !corpus.isEmpty:
                let other = corpus[self.below(corpus.count)]
                let from = self.below(other.count + 1)
                out = Array(out[..<at]) + Array(other[from...])
            default:
                if out.count > 1 {
                    out.removeSubrange(self.below(out.count)...)
                } else {
                    out.append(UInt8(truncatingIfNeeded: self.random.next()))
                }
            }
        }
        return out.count > self.maxLength ? Array(out.prefix(self.maxLength)) : out
    }
}
