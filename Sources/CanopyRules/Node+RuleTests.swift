import CanopyCore

/// The tests compiled rules make of a node (`isString()`, `val() >= 0`, `val() === x`), read in
/// place: no ``RuleValue`` built, no copy of a leaf's string.
extension Node {
    /// Whether `isString()` holds.
    var isStringLeaf: Bool {
        switch self {
        case .leaf(.string): return true
        case .prioritizedLeaf(let p): if case .string = p.value { return true } else { return false }
        default: return false
        }
    }

    /// Whether `isNumber()` holds.
    var isNumberLeaf: Bool {
        switch self {
        case .leaf(.int), .leaf(.double): return true
        case .prioritizedLeaf(let p): return p.value.isNumber
        default: return false
        }
    }

    /// Whether `isBoolean()` holds.
    var isBooleanLeaf: Bool {
        switch self {
        case .leaf(.bool): return true
        case .prioritizedLeaf(let p): if case .bool = p.value { return true } else { return false }
        default: return false
        }
    }

    /// `val()` when it is a number.
    var leafNumber: Double? {
        switch self {
        case .leaf(.int(let i)): return Double(i)
        case .leaf(.double(let d)): return d
        case .prioritizedLeaf(let p):
            switch p.value {
            case .int(let i): return Double(i)
            case .double(let d): return d
            default: return nil
            }
        default: return nil
        }
    }

    /// `val() === value`: ``RuleValue/strictlyEqual(_:_:)`` of `RuleValue(val: self)` and `value`.
    func valStrictlyEquals(_ value: RuleValue) -> Bool {
        switch self {
        case .empty: if case .null = value { return true } else { return false }
        case .children: return false
        case .leaf(let leaf): return Self.strictlyEqual(leaf, value)
        case .prioritizedLeaf(let p): return Self.strictlyEqual(p.value, value)
        }
    }

    private static func strictlyEqual(_ leaf: LeafValue, _ value: RuleValue) -> Bool {
        switch (leaf, value) {
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let i), .number(let y)): return Double(i) == y
        case (.double(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return RuleValue.strictlyEqual(.string(x), .string(y))
        default: return false
        }
    }
}
