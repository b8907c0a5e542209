package import CanopyCore

#if canImport(Glibc)
    import Glibc
#endif

/// Cutting a damaged journal at its first bad record (what `canopy repair` does): everything
/// before it stays, the damaged file and every later one are kept as backups.
///
/// The caller holds the directory's ``DirectoryLock`` from ``inspect(directory:)`` to
/// ``repair(_:files:backupSuffix:)``. The checkpoint is not touched: damage there cannot be cut
/// away and is reported as an error.
package enum StorageRepair {
    /// Where the journal first goes wrong, and what cutting it there loses.
    package struct Damage: Sendable, Equatable {
        package var directory: String
        /// The segment holding the first bad record (a name in `directory`).
        package var file: String
        /// The offset of the first bad record (0: the segment header itself is bad).
        package var offset: Int
        package var fileBytes: Int
        /// What is wrong there.
        package var reason: String
        /// Whether it is only a torn tail of the last segment (opening cuts that off by itself).
        package var isTornTail: Bool
        /// Later segments, dropped with it.
        package var laterFiles: [String]
        /// The last record kept (the checkpoint's when none of the journal is).
        package var lastKeptSequence: UInt64
        /// Records after the checkpoint that stay.
        package var keptRecords: Int
        /// Bytes cut off: the rest of the damaged file and all later files.
        package var bytesCut: Int
    }

    /// What ``repair(_:files:backupSuffix:)`` did.
    package struct Report: Sendable, Equatable {
        /// Backups written, as names in the directory (the damaged file's copy first).
        package var backups: [String]
        /// Whether the damaged file was truncated (else it was moved away whole: bad header).
        package var truncated: Bool
    }

    /// Scans the checkpoint and journal of `directory` as opening would, and returns the first
    /// bad record, or `nil` when the journal replays cleanly.
    ///
    /// - Throws: `.corrupted` when the newest checkpoint is damaged (not repairable by cutting the
    ///   journal), `.ioError` when a file cannot be read.
    package static func inspect(directory: String) throws(DatabaseError) -> Damage? {
        let names = try FileReader.list(directory)
        func path(_ name: String) -> String { directory + "/" + name }
        let checkpoints = names.compactMap { name in
            JournalFormat.sequence(inName: name, prefix: "checkpoint-", suffix: ".canopy").map { (name, $0) }
        }.sorted { $0.1 < $1.1 }
        var segments = names.compactMap { name in
            JournalFormat.sequence(inName: name, prefix: "journal-", suffix: ".log").map { (name, $0) }
        }.sorted { $0.1 < $1.1 }
        var root = Node.empty
        var last: UInt64 = 0
        if let newest = checkpoints.last, let bytes = try FileReader.read(path(newest.0)) {
            let decoded = try bytes.withBytes { raw throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: path(newest.0)) }
            root = decoded.root
            last = decoded.sequence
        }
        while segments.count > 1 && segments[1].1 <= last &+ 1 { segments.removeFirst() }

        let engine = SyncEngine(root: root)
        var kept = 0
        var sizes: [Int] = []
        for segment in segments {
            var info = stat()
            sizes.append(stat(path(segment.0), &info) == 0 ? Int(info.st_size) : 0)
        }
        for (index, segment) in segments.enumerated() {
            guard let bytes = try FileReader.read(path(segment.0)) else { continue }
            let isLast = index == segments.count - 1
            func damage(at offset: Int, _ reason: String, torn: Bool = false) -> Damage {
                let later = Array(segments[(index + 1)...])
                let laterBytes = sizes[(index + 1)...].reduce(0, +)
                return Damage(
                    directory: directory, file: segment.0, offset: offset, fileBytes: bytes.count, reason: reason,
                    isTornTail: torn, laterFiles: later.map(\.0), lastKeptSequence: last, keptRecords: kept,
                    bytesCut: bytes.count - offset + laterBytes)
            }
            let found: Damage? = bytes.withUnsafeBytes { raw in
                guard let first = JournalFormat.parseHeader(raw) else {
                    return damage(at: 0, "its header is not a valid Canopy journal header")
                }
                if first != segment.1 { return damage(at: 0, "its header names record \(first), not the \(segment.1) its name says") }
                if first > last &+ 1 { return damage(at: 0, "it starts at record \(first) but the records before it end at \(last)") }
                var offset = JournalFormat.headerSize
                while offset < raw.count {
                    switch JournalReader.frame(at: offset, in: raw) {
                    case .valid(let payloadLength):
                        let start = offset + JournalFormat.frameHeaderSize
                        let payload = UnsafeRawBufferPointer(rebasing: raw[start..<(start + payloadLength)])
                        let sequence = payload.loadLittleEndian(UInt64.self, at: 0)
                        let now = Int64(bitPattern: payload.loadLittleEndian(UInt64.self, at: 8))
                        var reader = ByteReader(UnsafeRawBufferPointer(rebasing: payload[JournalFormat.payloadPrefixSize...]))
                        let write: WriteOperation
                        do throws(CodecError) {
                            write = try WriteCodec.decode(from: &reader)
                        } catch {
                            return damage(at: offset, "record \(sequence) does not decode: \(error.reason)")
                        }
                        if sequence <= last {
                            // Covered by the checkpoint (a segment that straddles it).
                        } else if sequence == last &+ 1 {
                            do throws(DatabaseError) {
                                _ = try engine.apply(write, now: now)
                            } catch {
                                return damage(at: offset, "record \(sequence) cannot be replayed: \(error.message)")
                            }
                            last = sequence
                            kept += 1
                        } else {
                            return damage(at: offset, "record \(sequence) follows record \(last)")
                        }
                        offset = start + payloadLength
                    case .incomplete(let reason), .damaged(let reason):
                        let torn = isLast && JournalReader.nextValidFrame(after: offset, in: raw, lastSequence: last) == nil
                        return damage(at: offset, reason, torn: torn)
                    }
                }
                return nil
            }
            if let found { return found }
        }
        return nil
    }

    /// Cuts the journal at `damage`: copies the damaged file to `<name><backupSuffix>` and
    /// truncates it at the bad record (or moves it away whole when its header is bad), and moves
    /// every later segment to `<name><backupSuffix>`. Everything is synced before it returns.
    package static func repair(_ damage: Damage, files: StorageFiles = StorageFiles(io: POSIXFileIO()), backupSuffix: String)
        throws(DatabaseError) -> Report
    {
        let directory = damage.directory
        func path(_ name: String) -> String { directory + "/" + name }
        var backups: [String] = []
        let damagedPath = path(damage.file)
        let backupName = damage.file + backupSuffix
        let truncated = damage.offset >= JournalFormat.headerSize
        if truncated {
            guard let bytes = try FileReader.read(damagedPath) else {
                throw DatabaseError(.ioError, "The journal file \(damagedPath) disappeared during the repair.")
            }
            try bytes.withBytes { raw throws(DatabaseError) in try files.writeAtomically(raw, to: path(backupName), directory: directory) }
            backups.append(backupName)
            let fd = try files.openForAppend(damagedPath)
            defer { files.io.close(fd) }
            try files.truncate(fd, to: damage.offset, path: damagedPath)
            try files.sync(fd, path: damagedPath)
        } else {
            try self.move(damagedPath, to: path(backupName), files: files)
            backups.append(backupName)
        }
        for later in damage.laterFiles {
            try self.move(path(later), to: path(later + backupSuffix), files: files)
            backups.append(later + backupSuffix)
        }
        try files.syncDirectory(directory)
        return Report(backups: backups, truncated: truncated)
    }

    private static func move(_ from: String, to: String, files: StorageFiles) throws(DatabaseError) {
        let status = files.io.rename(from, to)
        guard status == 0 else { throw StorageFiles.ioError("rename \(from) to", to, -status) }
    }
}
