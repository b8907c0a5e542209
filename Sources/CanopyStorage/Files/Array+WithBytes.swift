package import CanopyCore

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies with typed throws.
    package func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(DatabaseError) -> Result) throws(DatabaseError) -> Result {
        let outcome: Swift.Result<Result, DatabaseError> = self.withUnsafeBytes { raw in
            do throws(DatabaseError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try outcome.get()
    }
}
