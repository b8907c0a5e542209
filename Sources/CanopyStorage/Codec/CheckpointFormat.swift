package import CanopyCore

/// The checkpoint file: a snapshot of the whole tree as of a journal sequence number (see
/// StorageFormat.md, "Checkpoint file").
///
/// Layout: a 40-byte header, the encoded tree (the payload), one CRC32C per payload block, and a
/// 24-byte footer. Every byte is covered by a checksum, and the header fixes the file's exact
/// length, so a truncated, extended or damaged file is reported, never read as a different tree.
package enum CheckpointFormat {
    static let magic: [UInt8] = Array("CNPYCKPT".utf8)
    static let endMagic: [UInt8] = Array("CNPYEND1".utf8)
    static let version: UInt32 = 1
    static let headerSize = 40
    static let footerSize = 24
    /// Payload bytes per checksummed block.
    static let blockSize = 1 << 20
    static let maxBlockSize = 1 << 30

    /// The whole checkpoint file for `root` as of journal sequence number `sequence`.
    package static func encode(root: Node, sequence: UInt64) -> [UInt8] {
        Self.encode(root: root, sequence: sequence, blockSize: Self.blockSize)
    }

    static func encode(root: Node, sequence: UInt64, blockSize: Int) -> [UInt8] {
        precondition(blockSize > 0 && blockSize <= Self.maxBlockSize, "invalid block size")
        var w = ByteWriter(capacity: 1 << 16)
        w.append(contentsOf: [UInt8](repeating: 0, count: Self.headerSize))
        var encoder = NodeEncoder()
        encoder.encode(root, into: &w)
        let payloadLength = w.count - Self.headerSize
        let blockCount = (payloadLength + blockSize - 1) / blockSize

        // Header.
        var header = ByteWriter(capacity: Self.headerSize)
        header.append(contentsOf: Self.magic)
        header.appendU32(Self.version)
        header.appendU32(UInt32(blockSize))
        header.appendU64(sequence)
        header.appendU64(UInt64(payloadLength))
        header.appendU32(UInt32(blockCount))
        header.appendU32(CRC32C.checksum(header.bytes))
        w.bytes.replaceSubrange(0..<Self.headerSize, with: header.bytes)

        // Block checksums.
        w.bytes.reserveCapacity(w.count + 4 * blockCount + Self.footerSize)
        let tableStart = w.count
        for i in 0..<blockCount {
            let start = Self.headerSize + i * blockSize
            let end = Swift.min(start + blockSize, Self.headerSize + payloadLength)
            let crc = w.bytes.withUnsafeBytes { Self.blockChecksum(index: i, UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            w.appendU32(crc)
        }

        // Footer.
        w.appendU64(UInt64(payloadLength))
        w.appendU32(UInt32(blockCount))
        let footerCRC = w.bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[tableStart...])) }
        w.appendU32(footerCRC)
        w.append(contentsOf: Self.endMagic)
        return w.bytes
    }

    /// CRC32C of the block's index (4 bytes, little-endian) followed by its bytes, so a block
    /// moved to another position does not verify.
    static func blockChecksum(index: Int, _ block: UnsafeRawBufferPointer) -> UInt32 {
        let seed = withUnsafeBytes(of: UInt32(truncatingIfNeeded: index).littleEndian) { CRC32C.checksum($0) }
        return CRC32C.checksum(block, seed: seed)
    }

    /// Parses and verifies a checkpoint file.
    ///
    /// - Throws: ``DatabaseError`` `.corrupted` naming `fileName` and the offset of the damage.
    package static func decode(_ bytes: UnsafeRawBufferPointer, fileName: String) throws(DatabaseError) -> (root: Node, sequence: UInt64) {
        do {
            return try Self.decode(bytes)
        } catch {
            throw DatabaseError(.corrupted, "Checkpoint file \(fileName) is damaged at offset \(error.offset): \(error.reason)")
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(CodecError) -> (root: Node, sequence: UInt64) {
        let size = bytes.count
        guard size >= Self.headerSize else {
            throw CodecError(offset: size, reason: "truncated: \(size) bytes, shorter than the \(Self.headerSize)-byte header")
        }
        var r = ByteReader(bytes)
        guard try r.readBytes(8).elementsEqual(Self.magic) else {
            throw CodecError(offset: 0, reason: "not a Canopy checkpoint (bad magic)")
        }
        let version = try r.readU32()
        let blockSizeField = try r.readU32()
        let sequence = try r.readU64()
        let payloadField = try r.readU64()
        let blockCountField = try r.readU32()
        let headerCRC = try r.readU32()
        guard headerCRC == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<36])) else {
            throw CodecError(offset: 0, reason: "header checksum mismatch")
        }
        guard version == Self.version else {
            throw CodecError(offset: 8, reason: "unsupported format version \(version) (expected \(Self.version))")
        }
        let blockSize = Int(blockSizeField)
        guard blockSize > 0 && blockSize <= Self.maxBlockSize else {
            throw CodecError(offset: 12, reason: "invalid block size \(blockSize)")
        }
        guard payloadField >= 1 && payloadField <= UInt64(Int.max / 4) else {
            throw CodecError(offset: 24, reason: "invalid payload length \(payloadField)")
        }
        let payloadLength = Int(payloadField)
        let blockCount = (payloadLength + blockSize - 1) / blockSize
        guard Int(blockCountField) == blockCount else {
            throw CodecError(offset: 32, reason: "block count \(blockCountField) does not match the payload length \(payloadLength)")
        }
        let tableStart = Self.headerSize + payloadLength
        let footerStart = tableStart + 4 * blockCount
        let expectedSize = footerStart + Self.footerSize
        guard size >= expectedSize else { throw CodecError(offset: size, reason: "truncated: \(size) bytes of \(expectedSize)") }
        guard size == expectedSize else {
            throw CodecError(offset: expectedSize, reason: "\(size - expectedSize) unexpected bytes after the footer")
        }

        // Footer: checksum of the block checksums and itself, copies of the header's lengths.
        var footer = ByteReader(bytes)
        footer.offset = footerStart
        let footerPayload = try footer.readU64()
        let footerBlocks = try footer.readU32()
        let footerCRC = try footer.readU32()
        guard footerCRC == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[tableStart..<(footerStart + 12)])) else {
            throw CodecError(offset: tableStart, reason: "block checksum table or footer checksum mismatch")
        }
        guard try footer.readBytes(8).elementsEqual(Self.endMagic) else {
            throw CodecError(offset: footerStart + 16, reason: "bad end magic")
        }
        guard footerPayload == payloadField && footerBlocks == blockCountField else {
            throw CodecError(offset: footerStart, reason: "footer does not match the header")
        }

        // Blocks.
        for i in 0..<blockCount {
            let start = Self.headerSize + i * blockSize
            let end = Swift.min(start + blockSize, tableStart)
            let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: tableStart + 4 * i, as: UInt32.self))
            guard stored == Self.blockChecksum(index: i, UnsafeRawBufferPointer(rebasing: bytes[start..<end])) else {
                throw CodecError(offset: start, reason: "checksum mismatch in block \(i) (bytes \(start)..<\(end))")
            }
        }

        // The tree.
        var payload = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[Self.headerSize..<tableStart]))
        do throws(CodecError) {
            var decoder = NodeDecoder()
            let root = try decoder.decode(&payload)
            guard payload.isAtEnd else { throw payload.error("\(payload.remaining) bytes after the tree") }
            return (root, sequence)
        } catch {
            throw CodecError(offset: Self.headerSize + error.offset, reason: error.reason)
        }
    }
}
