import CanopyCore
import CanopyStorage
import Testing

private func encodedWrite(_ write: WriteOperation) -> [UInt8] {
    var w = ByteWriter()
    WriteCodec.encode(write, into: &w)
    return w.bytes
}

private func decodeWrite(_ bytes: [UInt8]) throws(CodecError) -> WriteOperation {
    try decodeWhole(bytes) { r throws(CodecError) in try WriteCodec.decode(from: &r) }
}

@Suite("Write codec")
struct WriteCodecTests {
    @Test("random writes round-trip", arguments: 0..<60)
    func randomWrites(seed: UInt64) throws {
        var random = RandomTrees(seed: 1000 + seed)
        let write = random.write()
        let decoded = try decodeWrite(encodedWrite(write))
        #expect(identical(decoded, write))
        #expect(decoded.path == write.path)
    }

    @Test("set, setPriority with a server value, and a multi-path update round-trip")
    func shapes() throws {
        let post = Node.from(
            children: SortedMap(
                sortedKeys: [ChildKey("author"), ChildKey("starCount"), ChildKey("title")],
                values: [.leaf(.string("alice")), .leaf(.int(42)), .leaf(.string("#00012345678"))]))
        let set = WriteOperation.set(DatabasePath([ChildKey("posts"), ChildKey("-NkZ3x0aBcDeFgHiJkLm")]), WriteValue(node: post))
        let setBytes = encodedWrite(set)
        #expect(setBytes.count < 90)
        #expect(identical(try decodeWrite(setBytes), set))

        let priority = WriteOperation.setPriority(DatabasePath([ChildKey("a")]), .serverValue(.increment(.double(-0.5))))
        let decodedPriority = try decodeWrite(encodedWrite(priority))
        #expect(identical(decodedPriority, priority))
        #expect(decodedPriority.requiresExistingNode && decodedPriority.entries[0].isPriority)

        let update = WriteOperation(
            path: DatabasePath([ChildKey("users")]),
            entries: [
                .init(path: [ChildKey("u1"), ChildKey("name")], value: WriteValue(node: .leaf(.string("Ann")))),
                .init(path: [ChildKey("u2")], value: WriteValue(node: .empty)),
                .init(
                    path: [ChildKey("u3")],
                    value: WriteValue(
                        node: post,
                        placeholders: [
                            .init(path: [ChildKey("starCount")], value: .increment(.int(1)), isPriority: false),
                            .init(path: [], value: .timestamp, isPriority: true),
                        ])),
            ])
        #expect(identical(try decodeWrite(encodedWrite(update)), update))
    }

    @Test("every truncation of an encoded write fails cleanly")
    func truncations() throws {
        var random = RandomTrees(seed: 4242)
        var write = random.write()
        while encodedWrite(write).count < 40 { write = random.write() }
        let bytes = encodedWrite(write)
        expectEveryTruncationFails(bytes, decodeWrite)
    }

    @Test(
        "bad flags, kinds and empty path keys are rejected",
        arguments: [
            ([0x02, 0x00, 0x00], 0, "flags"),
            ([0x00, 0x01, 0x00, 0x00], 2, "empty key"),
            ([0x00, 0x00, 0x01, 0x00, 0xC1, 0x01, 0x04, 0x00], 6, "server value kind"),
            ([0x00, 0x00, 0x01, 0x00, 0xC1, 0x01, 0x02, 0x00, 0x81], 8, "leaf"),
        ] as [([UInt8], Int, String)])
    func rejected(bytes: [UInt8], offset: Int, reason: String) {
        do {
            _ = try decodeWrite(bytes)
            Issue.record("decoded \(bytes)")
        } catch {
            #expect(error.offset == offset, "\(error)")
            #expect(error.reason.contains(reason), "\(error)")
        }
    }
}
