/// A key or one of the sentinels below and above every key (Firebase's `[MIN_NAME]`/`[MAX_NAME]`),
/// used for range bounds without a key argument (see *Ordering and Keys*).
package enum KeyBound: Sendable, Equatable {
    case min
    case key(String)
    case max
}

/// The neighbouring keys the JS SDK uses to turn `startAfter`/`endBefore` on keys into inclusive
/// bounds (`successor`/`predecessor` of `NextPushId.ts`), over the push-ID alphabet.
package enum KeyNeighbours {
    static let minPushChar = UInt8(ascii: "-")
    static let maxPushChar = UInt8(ascii: "z")
    static let maxKeyLength = 786

    /// The smallest push-alphabet key greater than `key`.
    package static func successor(_ key: String) -> KeyBound {
        if key == String(Int32.max) { return .key("-") }
        let k = ChildKey(key)
        if k.isInteger { return .key(String(k.integer + 1)) }
        var next = Array(key.utf8)
        if next.count < maxKeyLength {
            next.append(minPushChar)
            return .key(String(decoding: next, as: UTF8.self))
        }
        var i = next.count - 1
        while i >= 0 && next[i] == maxPushChar { i -= 1 }
        if i < 0 { return .max }
        next[i] = nextPushChar(after: next[i])
        return .key(String(decoding: next[0...i], as: UTF8.self))
    }

    /// The largest push-alphabet key smaller than `key`.
    package static func predecessor(_ key: String) -> KeyBound {
        if key == String(Int32.min) { return .min }
        let k = ChildKey(key)
        if k.isInteger { return .key(String(k.integer - 1)) }
        var next = Array(key.utf8)
        if next.last == minPushChar {
            if next.count == 1 { return .key(String(Int32.max)) }
            next.removeLast()
            return .key(String(decoding: next, as: UTF8.self))
        }
        next[next.count - 1] = previousPushChar(before: next[next.count - 1])
        next.append(contentsOf: repeatElement(maxPushChar, count: max(0, maxKeyLength - next.count)))
        return .key(String(decoding: next, as: UTF8.self))
    }

    private static func nextPushChar(after c: UInt8) -> UInt8 {
        let alphabet = PushIDGenerator.alphabet
        guard let i = alphabet.firstIndex(of: c), i + 1 < alphabet.count else { return c }
        return alphabet[i + 1]
    }

    private static func previousPushChar(before c: UInt8) -> UInt8 {
        let alphabet = PushIDGenerator.alphabet
        guard let i = alphabet.firstIndex(of: c), i > 0 else { return c }
        return alphabet[i - 1]
    }
}
