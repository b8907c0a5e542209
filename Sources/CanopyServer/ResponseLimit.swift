/// The largest single answer (``ServerConfiguration/maxResponseBytes``), as the errors name it.
enum ResponseLimit {
    /// Why a read or listen of more than `limit` bytes is refused: Firebase's wording, with the limit.
    static func exceeded(_ limit: Int) -> String {
        "Data requested exceeds the maximum size that can be accessed with a single request (\(self.describe(limit))): "
            + "read or listen to a deeper location, or use a query or shallow=true."
    }

    /// `limit` in megabytes when it is a whole number of them, in bytes otherwise.
    static func describe(_ limit: Int) -> String {
        limit % (1 << 20) == 0 ? "\(limit >> 20) MB" : "\(limit) bytes"
    }
}
