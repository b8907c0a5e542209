/// A server value placeholder (`{".sv": …}`), resolved when its write is applied: every
/// timestamp of one write gets the same time, an increment adds to the number at its own path.
package enum ServerValuePlaceholder: Sendable, Equatable {
    case timestamp
    case increment(LeafValue)

    /// Parses the contents of a `.sv` key, or returns `nil` when they are not a known server value.
    package init?(_ json: JSONValue) {
        switch json {
        case .string("timestamp"): self = .timestamp
        case .object(let o) where o.count == 1:
            guard let delta = o["increment"] else { return nil }
            switch delta {
            case .int(let i): self = .increment(.int(i))
            case .double(let d) where d.isFinite: self = .increment(.double(d))
            default: return nil
            }
        default: return nil
        }
    }

    /// The value this placeholder resolves to, given the current leaf at its location.
    ///
    /// Increments add to a current number (Int64 arithmetic while it does not overflow, else
    /// Double) and otherwise replace the current value with the delta.
    package func resolve(current: LeafValue?, now: Int64) -> LeafValue {
        switch self {
        case .timestamp:
            return .int(now)
        case .increment(let delta):
            switch (current, delta) {
            case (.int(let a)?, .int(let b)):
                let (sum, overflow) = a.addingReportingOverflow(b)
                return overflow ? .double(Double(a) + Double(b)) : .int(sum)
            case (.int(let a)?, .double(let b)): return .double(Double(a) + b)
            case (.double(let a)?, .int(let b)): return .double(a + Double(b))
            case (.double(let a)?, .double(let b)): return .double(a + b)
            default: return delta
            }
        }
    }
}
