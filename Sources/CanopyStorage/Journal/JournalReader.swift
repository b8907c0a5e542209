package import CanopyCore

/// Reads a journal segment, telling a torn tail (a crash mid-append: cut it off) from damage
/// before the end (refuse to open).
package enum JournalReader {
    /// What reading a segment found.
    package struct Scan: Sendable, Equatable {
        /// The sequence number the segment header names.
        package var firstSequence: UInt64
        /// The sequence number of the last valid record, or `firstSequence - 1` when none.
        package var lastSequence: UInt64
        /// Valid records in the segment.
        package var records: Int
        /// The offset just past the last valid record: where appending continues.
        package var validEnd: Int
        /// A damaged tail that follows the valid records (offset and what is wrong), if any.
        package var tornTail: TornTail?
    }

    package struct TornTail: Sendable, Equatable {
        package var offset: Int
        package var length: Int
        package var reason: String
    }

    /// Reads every record of the segment `bytes` (named `fileName`, for errors) in order, calling
    /// `body` with each one's sequence number, time and write.
    ///
    /// - Throws: `.corrupted` naming the file and offset for a damaged header, a record whose
    ///   checksum holds but whose contents do not decode, out-of-order sequence numbers, or a
    ///   damaged record followed by valid ones; and whatever `body` throws.
    package static func scan(
        _ bytes: UnsafeRawBufferPointer,
        fileName: String,
        body: (_ sequence: UInt64, _ now: Int64, _ write: WriteOperation) throws(DatabaseError) -> Void
    ) throws(DatabaseError) -> Scan {
        guard let first = JournalFormat.parseHeader(bytes) else {
            throw DatabaseError(
                .corrupted, "The journal file \(fileName) is damaged at offset 0: its header is not a valid Canopy journal header.")
        }
        var scan = Scan(firstSequence: first, lastSequence: first &- 1, records: 0, validEnd: JournalFormat.headerSize, tornTail: nil)
        var offset = JournalFormat.headerSize
        while offset < bytes.count {
            let problem: String
            switch frame(at: offset, in: bytes) {
            case .valid(let payloadLength):
                let payload = UnsafeRawBufferPointer(
                    rebasing: bytes[(offset + JournalFormat.frameHeaderSize)..<(offset + JournalFormat.frameHeaderSize + payloadLength)])
                let sequence = payload.loadLittleEndian(UInt64.self, at: 0)
                guard sequence == scan.lastSequence &+ 1 else {
                    throw DatabaseError(
                        .corrupted,
                        "The journal file \(fileName) is damaged at offset \(offset): record \(sequence) follows record \(scan.lastSequence)."
                    )
                }
                let (now, write) = try decodePayload(
                    payload, in: "The journal file \(fileName)", at: offset + JournalFormat.frameHeaderSize)
                try body(sequence, now, write)
                scan.lastSequence = sequence
                scan.records += 1
                offset += JournalFormat.frameHeaderSize + payloadLength
                scan.validEnd = offset
                continue
            case .incomplete(let reason), .damaged(let reason):
                problem = reason
            }
            if let later = nextValidFrame(after: offset, in: bytes, lastSequence: scan.lastSequence) {
                throw DatabaseError(
                    .corrupted,
                    "The journal file \(fileName) is damaged at offset \(offset) (\(problem)), before a valid record at offset \(later); the journal cannot be replayed past it."
                )
            }
            scan.tornTail = TornTail(offset: offset, length: bytes.count - offset, reason: problem)
            break
        }
        return scan
    }

    /// The time and write of a record's payload (its sequence number, time, then the write).
    static func decodePayload(_ payload: UnsafeRawBufferPointer, in container: String, at offset: Int) throws(DatabaseError) -> (
        now: Int64, write: WriteOperation
    ) {
        let now = Int64(bitPattern: payload.loadLittleEndian(UInt64.self, at: 8))
        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: payload[JournalFormat.payloadPrefixSize...]))
        do {
            return (now, try WriteCodec.decode(from: &reader))
        } catch {
            throw DatabaseError(
                .corrupted, "\(container) is damaged at offset \(offset + JournalFormat.payloadPrefixSize + error.offset): \(error.reason)."
            )
        }
    }

    /// Decodes `bytes`, exactly one framed record (as ``JournalFormat/appendRecord(_:sequence:now:to:)``
    /// writes it: a cluster's log keeps each record in a row of its own); `container` names
    /// where it comes from in errors.
    ///
    /// - Throws: `.corrupted` when the frame is incomplete, damaged, followed by other bytes, or
    ///   does not decode.
    package static func decodeRecord(_ bytes: UnsafeRawBufferPointer, in container: String) throws(DatabaseError) -> (
        sequence: UInt64, now: Int64, write: WriteOperation
    ) {
        switch frame(at: 0, in: bytes) {
        case .valid(let length):
            guard JournalFormat.frameHeaderSize + length == bytes.count else {
                throw DatabaseError(.corrupted, "\(container) is damaged: \(bytes.count) bytes hold a record of \(length).")
            }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[JournalFormat.frameHeaderSize...])
            let (now, write) = try decodePayload(payload, in: container, at: JournalFormat.frameHeaderSize)
            return (payload.loadLittleEndian(UInt64.self, at: 0), now, write)
        case .incomplete(let reason), .damaged(let reason):
            throw DatabaseError(.corrupted, "\(container) is damaged: \(reason).")
        }
    }

    enum Frame {
        case valid(payloadLength: Int)
        case incomplete(String)
        case damaged(String)
    }

    static func frame(at offset: Int, in bytes: UnsafeRawBufferPointer) -> Frame {
        let remaining = bytes.count - offset
        guard remaining >= JournalFormat.frameHeaderSize else { return .incomplete("an incomplete record header") }
        let length = Int(bytes.loadLittleEndian(UInt32.self, at: offset))
        guard length >= JournalFormat.payloadPrefixSize, length <= JournalFormat.maxPayload else {
            return .damaged("an impossible record length \(length)")
        }
        guard remaining - JournalFormat.frameHeaderSize >= length else {
            return .incomplete("a record of \(length) bytes with only \(remaining - JournalFormat.frameHeaderSize) present")
        }
        let stored = bytes.loadLittleEndian(UInt32.self, at: offset + 4)
        var crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 4)]))
        crc = CRC32C.checksum(
            UnsafeRawBufferPointer(
                rebasing: bytes[(offset + JournalFormat.frameHeaderSize)..<(offset + JournalFormat.frameHeaderSize + length)]), seed: crc)
        guard crc == stored else { return .damaged("a record whose checksum does not match") }
        return .valid(payloadLength: length)
    }

    /// The offset of a valid record after `offset` whose sequence number could follow
    /// `lastSequence`, if there is one: proof that the damage is not a torn tail.
    static func nextValidFrame(after offset: Int, in bytes: UnsafeRawBufferPointer, lastSequence: UInt64) -> Int? {
        let minimum = JournalFormat.frameHeaderSize + JournalFormat.payloadPrefixSize
        guard bytes.count - offset > minimum else { return nil }
        for candidate in (offset + 1)...(bytes.count - minimum) {
            let sequence = bytes.loadLittleEndian(UInt64.self, at: candidate + JournalFormat.frameHeaderSize)
            guard sequence > lastSequence, sequence - lastSequence <= 1 << 24 else { continue }
            if case .valid = frame(at: candidate, in: bytes) { return candidate }
        }
        return nil
    }
}
