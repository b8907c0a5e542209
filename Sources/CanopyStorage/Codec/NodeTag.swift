/// The first byte of every encoded node (see StorageFormat.md, "Node encoding").
enum NodeTag {
    static let empty: UInt8 = 0x00
    static let falseValue: UInt8 = 0x01
    static let trueValue: UInt8 = 0x02
    /// Followed by a zigzag varint.
    static let int: UInt8 = 0x03
    /// Followed by the 8 little-endian bytes of the IEEE 754 bit pattern.
    static let double: UInt8 = 0x04
    /// Followed by a varint byte length and the UTF-8 bytes.
    static let string: UInt8 = 0x05
    /// Followed by a varint child count (≥ 1) and the children.
    static let children: UInt8 = 0x06
    /// Followed by the value leaf, then the priority leaf.
    static let prioritizedLeaf: UInt8 = 0x07
    /// Followed by the priority leaf, a varint child count (≥ 1) and the children.
    static let prioritizedChildren: UInt8 = 0x08

    /// `0x40 | n`: a string of `n` (0…63) UTF-8 bytes, which follow.
    static let shortString: UInt8 = 0x40
    /// `0x80 | (n - 1)`: a children node of `n` (1…64) children, which follow.
    static let smallChildren: UInt8 = 0x80
    /// `0xC0 | n`: the integer `n` (0…63).
    static let smallInt: UInt8 = 0xC0

    static let inlineLimit = 64
}
