import Synchronization

/// Generates push IDs (see *Ordering and Keys*): 8 characters of millisecond timestamp and 12
/// random characters from a 64-character alphabet in ASCII order, strictly increasing across
/// calls and threads.
package final class PushIDGenerator: Sendable {
    package static let alphabet: [UInt8] = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)

    private struct State {
        var lastTime: Int64 = -1
        var lastRandom = [UInt8](repeating: 0, count: 12)
    }

    private let state = Mutex(State())

    package init() {}

    /// A shared generator, so IDs from every database in the process increase together.
    package static let shared = PushIDGenerator()

    /// The next ID for the time `now` (milliseconds since the epoch).
    package func next(now: Int64) -> String {
        self.state.withLock { state in
            // A clock that steps back reuses the last time, so IDs still increase.
            let time = max(now, state.lastTime)
            if time == state.lastTime {
                var i = 11
                while i >= 0 && state.lastRandom[i] == 63 {
                    state.lastRandom[i] = 0
                    i -= 1
                }
                if i >= 0 { state.lastRandom[i] += 1 }
            } else {
                var rng = SystemRandomNumberGenerator()
                for i in 0..<12 { state.lastRandom[i] = UInt8(rng.next() % 64) }
            }
            state.lastTime = time
            return PushIDGenerator.format(time: time, random: state.lastRandom)
        }
    }

    /// Formats an ID from a timestamp and 12 random digits (each 0…63).
    package static func format(time: Int64, random: [UInt8]) -> String {
        var bytes = [UInt8](repeating: 0, count: 20)
        var t = time
        for i in stride(from: 7, through: 0, by: -1) {
            bytes[i] = alphabet[Int(t % 64)]
            t /= 64
        }
        for i in 0..<12 { bytes[8 + i] = alphabet[Int(random[i])] }
        return String(decoding: bytes, as: UTF8.self)
    }
}
