import CanopyCore
import CanopyStorage
import Testing

/// A checkpoint file built by hand from the documented layout (StorageFormat.md), around any payload.
private func handMadeCheckpoint(
    payload: [UInt8], sequence: UInt64, blockSize: Int = 1 << 20, version: UInt32 = 1, magic: String = "CNPYCKPT"
) -> [UInt8] {
    let blocks = (payload.count + blockSize - 1) / blockSize
    var w = ByteWriter()
    w.append(contentsOf: Array(magic.utf8))
    w.appendU32(version)
    w.appendU32(UInt32(blockSize))
    w.appendU64(sequence)
    w.appendU64(UInt64(payload.count))
    w.appendU32(UInt32(blocks))
    w.appendU32(CRC32C.checksum(w.bytes))
    w.append(contentsOf: payload)
    let tableStart = w.count
    for i in 0..<blocks {
        var indexBytes = ByteWriter()
        indexBytes.appendU32(UInt32(i))
        let block = Array(payload[(i * blockSize)..<min(payload.count, (i + 1) * blockSize)])
        w.appendU32(CRC32C.checksum(block, seed: CRC32C.checksum(indexBytes.bytes)))
    }
    w.appendU64(UInt64(payload.count))
    w.appendU32(UInt32(blocks))
    w.appendU32(CRC32C.checksum(Array(w.bytes[tableStart...])))
    w.append(contentsOf: Array("CNPYEND1".utf8))
    return w.bytes
}

private func expectCorrupted(
    _ bytes: [UInt8], fileName: String = "checkpoint-7.canopy", offset: Int? = nil, reason: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let decoded = try decodeCheckpoint(bytes, fileName: fileName)
        Issue.record("decoded a damaged checkpoint: \(decoded.root)", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .corrupted, sourceLocation: sourceLocation)
        #expect(error.message.contains(fileName), "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains("at offset "), "\(error)", sourceLocation: sourceLocation)
        if let offset { #expect(error.message.contains("at offset \(offset):"), "\(error)", sourceLocation: sourceLocation) }
        if let reason { #expect(error.message.contains(reason), "\(error)", sourceLocation: sourceLocation) }
    }
}

@Suite("Checkpoint format")
struct CheckpointFormatTests {
    @Test("random trees round-trip with their sequence number", arguments: 0..<20)
    func roundTrip(seed: UInt64) throws {
        var random = RandomTrees(seed: 500 + seed)
        let root = seed == 0 ? Node.empty : random.node(depth: 5)
        let sequence = seed == 1 ? UInt64.max : random.rng.next() >> 8
        let file = CheckpointFormat.encode(root: root, sequence: sequence)
        let decoded = try decodeCheckpoint(file)
        #expect(decoded.sequence == sequence)
        #expect(decoded.root == root)
        #expect(identical(decoded.root, root))
    }

    @Test("the encoder's output matches the documented layout byte for byte")
    func documentedLayout() throws {
        var random = RandomTrees(seed: 77)
        let root = random.node(depth: 4)
        let file = CheckpointFormat.encode(root: root, sequence: 12345)
        #expect(file == handMadeCheckpoint(payload: encoded(root), sequence: 12345))
        #expect(Array(file[0..<8]) == Array("CNPYCKPT".utf8))
    }

    @Test("multi-block payloads verify each block")
    func blocks() throws {
        var items = SortedMap<ChildKey, Node>()
        for i in 0..<20_000 {
            _ = items.updateValue(.leaf(.string("value number \(i) with some padding text")), forKey: ChildKey("key\(i)"))
        }
        let root = Node.from(children: items)
        let payload = encoded(root)
        let file = handMadeCheckpoint(payload: payload, sequence: 3, blockSize: 4096)
        #expect(payload.count > 10 * 4096)
        #expect(identical(try decodeCheckpoint(file).root, root))
        // Damage in block 5 is reported at the block's start.
        var damaged = file
        damaged[40 + 5 * 4096 + 100] ^= 0x10
        expectCorrupted(damaged, offset: 40 + 5 * 4096, reason: "block 5")
        // Two blocks swapped (each checksum covers its index).
        var swapped = file
        swapped.replaceSubrange((40 + 4096)..<(40 + 2 * 4096), with: file[(40 + 2 * 4096)..<(40 + 3 * 4096)])
        swapped.replaceSubrange((40 + 2 * 4096)..<(40 + 3 * 4096), with: file[(40 + 4096)..<(40 + 2 * 4096)])
        expectCorrupted(swapped, offset: 40 + 4096)
    }

    @Test("every truncation and any extension are reported with the file name and an offset")
    func truncations() {
        var random = RandomTrees(seed: 8)
        let file = CheckpointFormat.encode(root: random.node(depth: 3), sequence: 9)
        for length in 0..<file.count {
            expectCorrupted(Array(file[..<length]), fileName: "cp-\(length).canopy", offset: length)
        }
        expectCorrupted(file + [0], offset: file.count, reason: "after the footer")
    }

    @Test("every single-bit flip is detected", arguments: 0..<4)
    func bitFlips(seed: UInt64) {
        var random = RandomTrees(seed: 900 + seed)
        let file = CheckpointFormat.encode(root: random.node(depth: 5), sequence: 42)
        for _ in 0..<400 {
            var damaged = file
            let bit = random.int(file.count * 8)
            damaged[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
            expectCorrupted(damaged, fileName: "checkpoint-42.canopy")
        }
    }

    @Test("wrong magic, unknown version")
    func magicAndVersion() {
        let payload = encoded(.leaf(.int(1)))
        expectCorrupted(handMadeCheckpoint(payload: payload, sequence: 1, magic: "NOTCANPY"), offset: 0, reason: "magic")
        expectCorrupted(handMadeCheckpoint(payload: payload, sequence: 1, version: 2), offset: 8, reason: "version 2")
        expectCorrupted(Array("{\"json\": true, \"not\": \"a checkpoint file at all\"}".utf8), offset: 0, reason: "magic")
        #expect(throws: Never.self) { try decodeCheckpoint(handMadeCheckpoint(payload: payload, sequence: 1)) }
    }

    @Test(
        "payloads breaking node invariants are rejected even with valid checksums",
        arguments: [
            [0x81, 0x01, 0x01, 0x62, 0xC1, 0x01, 0x01, 0x61, 0xC2],  // keys out of order
            [0x80, 0x01, 0x01, 0x61, 0x00],  // empty child
            [0xC1, 0xC1],  // bytes after the tree
            [0x81, 0x01, 0x01, 0x61, 0xC1],  // truncated children
        ] as [[UInt8]])
    func invalidPayloads(payload: [UInt8]) {
        expectCorrupted(handMadeCheckpoint(payload: payload, sequence: 5))
    }
}
