import CanopyCore
import CanopyStorage

extension FuzzTarget {
    /// The journal reader and the checkpoint decoder on damaged files. The first byte picks the
    /// mode: a raw journal segment; a "sealed" segment, whose header and record checksums are
    /// recomputed so that the mutations reach the record decoder and the replay; or a checkpoint.
    ///
    /// Properties: reading either succeeds or throws `.corrupted` naming the file; a successful
    /// scan accounts for every byte (valid records, then at most a torn tail); every record it
    /// hands over replays (or the reader says why not); a decoded checkpoint encodes and decodes
    /// to the same tree.
    public static let journal = FuzzTarget(
        name: "journal",
        dictionary: [
            "CNPYJRNL", "CNPYCKPT", "\u{1}\u{0}\u{0}\u{0}", "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}", "\u{FF}\u{FF}\u{FF}\u{FF}",
        ]
    ) { input throws(FuzzFailure) in
        guard let mode = input.first else { return }
        var bytes = Array(input.dropFirst())
        switch mode % 3 {
        case 0: try checkSegment(bytes)
        case 1:
            seal(&bytes)
            try checkSegment(bytes)
        default: try checkCheckpoint(bytes)
        }
    }

    private static func checkSegment(_ bytes: [UInt8]) throws(FuzzFailure) {
        let engine = SyncEngine()
        var handed = 0
        let scan: JournalReader.Scan
        do throws(DatabaseError) {
            scan = try bytes.withBytes { raw throws(DatabaseError) in
                try JournalReader.scan(raw, fileName: "fuzz.journal") { _, now, write throws(DatabaseError) in
                    handed += 1
                    do throws(DatabaseError) {
                        _ = try engine.apply(write, now: now)
                    } catch {
                        // What recovery does with a record that does not replay.
                        throw DatabaseError(
                            .corrupted, "The journal file fuzz.journal holds a record which cannot be replayed: \(error.message)")
                    }
                }
            }
        } catch {
            try require(error.code == .corrupted, "reading a segment threw \(error.code): \(error.message)")
            try require(error.message.contains("fuzz.journal"), "the error does not name the file: \(error.message)")
            return
        }
        try require(scan.records == handed, "the scan counts \(scan.records) records but handed over \(handed)")
        try require(
            scan.lastSequence == scan.firstSequence &+ UInt64(scan.records) &- 1,
            "sequence numbers \(scan.firstSequence)...\(scan.lastSequence) for \(scan.records) records")
        try require(
            scan.validEnd >= JournalFormat.headerSize && scan.validEnd <= bytes.count,
            "valid end \(scan.validEnd) outside the file of \(bytes.count) bytes")
        if let torn = scan.tornTail {
            try require(
                torn.offset == scan.validEnd && torn.offset + torn.length == bytes.count,
                "the torn tail \(torn) does not cover the end after \(scan.validEnd)")
        } else {
            try require(scan.validEnd == bytes.count, "the scan stopped at \(scan.validEnd) of \(bytes.count) without a torn tail")
        }
    }

    /// Gives `bytes` a valid segment header (keeping its sequence number when it has one) and
    /// recomputes the checksum of every record whose length field is plausible.
    private static func seal(_ bytes: inout [UInt8]) {
        if bytes.count < JournalFormat.headerSize || Array(bytes[0..<8]) != JournalFormat.magic {
            bytes.insert(contentsOf: JournalFormat.header(firstSequence: 1), at: 0)
        } else {
            let first = bytes.withUnsafeBytes { $0.loadLittleEndian(UInt64.self, at: 12) }
            bytes.replaceSubrange(0..<JournalFormat.headerSize, with: JournalFormat.header(firstSequence: first))
        }
        var offset = JournalFormat.headerSize
        while bytes.count - offset >= JournalFormat.frameHeaderSize {
            let length = Int(bytes.withUnsafeBytes { $0.loadLittleEndian(UInt32.self, at: offset) })
            guard length >= JournalFormat.payloadPrefixSize, length <= bytes.count - offset - JournalFormat.frameHeaderSize else { return }
            var crc = CRC32C.checksum(Array(bytes[offset..<(offset + 4)]))
            crc = CRC32C.checksum(
                Array(bytes[(offset + JournalFormat.frameHeaderSize)..<(offset + JournalFormat.frameHeaderSize + length)]), seed: crc)
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: offset + 4, as: UInt32.self) }
            offset += JournalFormat.frameHeaderSize + length
        }
    }

    private static func checkCheckpoint(_ bytes: [UInt8]) throws(FuzzFailure) {
        let decoded: (root: Node, sequence: UInt64)
        do throws(DatabaseError) {
            decoded = try bytes.withBytes { raw throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: "fuzz.checkpoint") }
        } catch {
            try require(
                error.code == .corrupted && error.message.contains("fuzz.checkpoint"),
                "decoding a checkpoint threw \(error.code): \(error.message)")
            return
        }
        let encoded = CheckpointFormat.encode(root: decoded.root, sequence: decoded.sequence)
        do {
            let again = try encoded.withBytes { raw throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: "again") }
            try require(again.root == decoded.root && again.sequence == decoded.sequence, "a decoded checkpoint does not survive encoding")
        } catch let failure as FuzzFailure {
            throw failure
        } catch {
            throw FuzzFailure("a re-encoded checkpoint does not decode: \(error)")
        }
    }
}
