/// The low two bits of a key reference varint (see StorageFormat.md, "Keys").
enum KeyReference {
    /// `index << 2`: a key of the key table.
    static let tableEntry: UInt64 = 0
    /// `prefix << 2 | 1`: a literal key, not added to the table.
    static let literal: UInt64 = 1
    /// `prefix << 2 | 2`: a literal key, appended to the key table.
    static let internedLiteral: UInt64 = 2
}
