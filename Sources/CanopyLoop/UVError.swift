import CLibUV

/// An error code returned by a libuv call (a negated `errno`, such as `UV_EMFILE`).
///
/// Any thread may create and inspect it.
package struct UVError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The libuv status code, always negative (for example `-16` for `EBUSY`).
    package let code: Int32

    /// Wraps a negative libuv status code.
    package init(code: Int32) {
        self.code = code
    }

    /// The symbolic name of the error, such as `"EBUSY"`.
    package var name: String {
        Self.describe(self.code, with: uv_err_name_r)
    }

    /// The human-readable message, such as `"resource busy or locked"`.
    package var message: String {
        Self.describe(self.code, with: uv_strerror_r)
    }

    /// `"EBUSY (-16): resource busy or locked"`.
    package var description: String {
        "\(self.name) (\(self.code)): \(self.message)"
    }

    /// Returns `status` when it is not negative; throws it as a ``UVError`` otherwise.
    @discardableResult
    static func check(_ status: Int32) throws(UVError) -> Int32 {
        guard status >= 0 else { throw UVError(code: status) }
        return status
    }

    /// The `_r` variants write into our buffer; the plain ones leak for unknown codes.
    private static func describe(
        _ code: Int32,
        with render: (Int32, UnsafeMutablePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
    ) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer in
            guard let base = buffer.baseAddress else { return "\(code)" }
            buffer.initialize(repeating: 0)
            _ = render(code, base, buffer.count - 1)
            return String(cString: base)
        }
    }
}
