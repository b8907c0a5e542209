package import CanopyCore
import CanopyStorage
package import NIOCore

extension LogRecord {
    /// `write` framed as a journal record (the bytes the log and onDisconnect registrations keep).
    package static func encode(_ write: WriteOperation, sequence: UInt64, now: Int64) -> ByteBuffer {
        var frame: [UInt8] = []
        JournalFormat.appendRecord(write, sequence: sequence, now: now, to: &frame)
        return ByteBuffer(bytes: frame)
    }

    /// The record framed in `bytes` (exactly one); `container` names where it comes from in errors.
    ///
    /// - Throws: `.corrupted` when the frame is damaged or does not decode.
    package static func decode(_ bytes: ByteBuffer, in container: String) throws(DatabaseError) -> (
        sequence: UInt64, now: Int64, write: WriteOperation
    ) {
        try Array(bytes.readableBytesView).withBytes { raw throws(DatabaseError) in try JournalReader.decodeRecord(raw, in: container) }
    }
}
