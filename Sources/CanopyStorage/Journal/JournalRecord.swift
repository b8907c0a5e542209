package import CanopyCore

/// A write to journal, applied at `now`, with its sequence number: handed to the journal thread,
/// which encodes it as a record (see `JournalFormat.appendRecord`) off the database loop.
package struct JournalRecord: Sendable {
    package let write: WriteOperation
    package let sequence: UInt64
    package let now: Int64

    package init(_ write: WriteOperation, sequence: UInt64, now: Int64) {
        self.write = write
        self.sequence = sequence
        self.now = now
    }
}
