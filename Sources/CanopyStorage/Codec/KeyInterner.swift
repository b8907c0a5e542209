/// The encoder's side of the key table: decides which keys are worth a table entry.
///
/// Only keys of small children nodes (at most 64 children, typically an object's field names) are
/// candidates; a candidate is written literally the first time, added to the table the second
/// time, and referenced by index after that. Keys of large collections (push IDs) are unique, so
/// they are written literally, with the prefix they share with the previous key elided.
struct KeyInterner {
    static let maxTableSize = 1 << 16
    static let maxPending = 1 << 16
    static let maxCandidateNodeSize = 64
    /// Keys tracked in a plain array before moving to a dictionary (a small write never allocates one).
    static let linearLimit = 16

    /// The first keys seen, with their table index or -1 (seen once): small encodings only.
    private var linear: [(key: String, index: Int32)] = []
    /// `≥ 0`: the key's table index; `-1`: seen once, not yet in the table.
    private var entries: [String: Int32] = [:]
    private var usesDictionary = false
    private(set) var tableSize = 0
    private var pending = 0

    enum Decision {
        case reference(Int)
        case literal
        case internedLiteral
    }

    mutating func decide(_ key: String) -> Decision {
        if !self.usesDictionary {
            for i in self.linear.indices where self.linear[i].key == key {
                let index = self.linear[i].index
                if index >= 0 { return .reference(Int(index)) }
                self.linear[i].index = Int32(self.tableSize)
                self.tableSize += 1
                return .internedLiteral
            }
            if self.linear.count < Self.linearLimit {
                if self.linear.isEmpty { self.linear.reserveCapacity(Self.linearLimit) }
                self.linear.append((key, -1))
                return .literal
            }
            self.usesDictionary = true
            self.entries.reserveCapacity(4 * Self.linearLimit)
            for entry in self.linear {
                self.entries[entry.key] = entry.index
                if entry.index < 0 { self.pending += 1 }
            }
            self.linear = []
        }
        if let i = self.entries.index(forKey: key) {
            let index = self.entries.values[i]
            if index >= 0 { return .reference(Int(index)) }
            guard self.tableSize < Self.maxTableSize else { return .literal }
            self.entries.values[i] = Int32(self.tableSize)
            self.tableSize += 1
            self.pending -= 1
            return .internedLiteral
        }
        if self.tableSize >= Self.maxTableSize { return .literal }
        if self.pending >= Self.maxPending {
            // Forget the keys seen only once so far (a new generation of candidates).
            self.entries = self.entries.filter { $0.value >= 0 }
            self.pending = 0
        }
        self.entries[key] = -1
        self.pending += 1
        return .literal
    }
}
