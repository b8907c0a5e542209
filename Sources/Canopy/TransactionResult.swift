/// What a transaction block returns: the new data, or abort (Firebase's `TransactionResult`).
public struct TransactionResult {
    package let data: MutableData?

    /// Commit `value` (normally the `MutableData` the block received, changed).
    public static func success(withValue value: MutableData) -> TransactionResult { TransactionResult(data: value) }

    /// Leave the data unchanged; the completion reports `committed == false`.
    public static func abort() -> TransactionResult { TransactionResult(data: nil) }

    public var isAborted: Bool { self.data == nil }
}
