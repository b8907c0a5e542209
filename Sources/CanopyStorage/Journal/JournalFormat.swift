package import CanopyCore

/// The journal's byte layout (documented in the StorageFormat article).
///
/// A journal is a sequence of segment files `journal-<first sequence, 16 hex digits>.log`. Each
/// starts with a 24-byte header: the magic `CNPYJRNL`, a UInt32 format version, the UInt64
/// sequence number of its first record and a CRC32C of those 20 bytes. Records follow, each
/// framed as: UInt32 payload length, UInt32 CRC32C of the length bytes and the payload, then the
/// payload: UInt64 sequence number, Int64 server time (ms since 1970) and the encoded write.
/// Integers are little-endian.
package enum JournalFormat {
    package static let magic: [UInt8] = Array("CNPYJRNL".utf8)
    package static let version: UInt32 = 1
    package static let headerSize = 24
    package static let frameHeaderSize = 8
    /// Payload bytes before the write: sequence and time.
    package static let payloadPrefixSize = 16
    /// The largest record accepted when reading (a write is at most 256 MB of JSON).
    package static let maxPayload = 1 << 30

    package static func segmentName(firstSequence: UInt64) -> String {
        "journal-" + hex16(firstSequence) + ".log"
    }

    package static func checkpointName(sequence: UInt64) -> String {
        "checkpoint-" + hex16(sequence) + ".canopy"
    }

    /// The sequence number in a segment or checkpoint file name, or `nil` for other names.
    package static func sequence(inName name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.utf8.count == prefix.utf8.count + 16 + suffix.utf8.count else {
            return nil
        }
        let digits = name.dropFirst(prefix.count).dropLast(suffix.count)
        return UInt64(digits, radix: 16)
    }

    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    package static func header(firstSequence: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(version)
        bytes.appendLittleEndian(firstSequence)
        bytes.appendLittleEndian(CRC32C.checksum(bytes))
        return bytes
    }

    /// The first sequence number a segment header names, or `nil` if the header is damaged.
    package static func parseHeader(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= headerSize, Array(bytes[0..<8]) == magic,
            bytes.loadLittleEndian(UInt32.self, at: 8) == version,
            bytes.loadLittleEndian(UInt32.self, at: 20) == CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<20]))
        else { return nil }
        return bytes.loadLittleEndian(UInt64.self, at: 12)
    }

    /// Appends one framed record to `buffer`.
    package static func appendRecord(_ write: WriteOperation, sequence: UInt64, now: Int64, to buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: frameHeaderSize))
        buffer.appendLittleEndian(sequence)
        buffer.appendLittleEndian(UInt64(bitPattern: now))
        var writer = ByteWriter()
        swap(&writer.bytes, &buffer)
        WriteCodec.encode(write, into: &writer)
        swap(&writer.bytes, &buffer)
        let length = UInt32(buffer.count - start - frameHeaderSize)
        buffer.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: length.littleEndian, toByteOffset: start, as: UInt32.self)
            let lengthBytes = UnsafeRawBufferPointer(rebasing: raw[start..<(start + 4)])
            var crc = CRC32C.checksum(lengthBytes)
            crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(start + frameHeaderSize)...]), seed: crc)
            raw.storeBytes(of: crc.littleEndian, toByteOffset: start + 4, as: UInt32.self)
        }
    }
}

extension [UInt8] {
    package mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { self.append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    package func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: self.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
