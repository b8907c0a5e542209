package import CanopyCore

#if canImport(Glibc)
    import Glibc
#endif

/// Opening a database directory: the newest checkpoint, then the journal after it.
package struct StorageRecovery {
    /// What opening found and where appending continues.
    package struct Opened {
        /// The tree and the positions the store starts from.
        package var start: DurableStore.Start
        /// The segment to append to, open at its end.
        package var segmentPath: String
        package var segmentFD: Int32
        package var segmentOffset: Int
    }

    package let directory: String
    package let files: StorageFiles

    package init(directory: String, files: StorageFiles) {
        self.directory = directory
        self.files = files
    }

    func path(_ name: String) -> String { self.directory + "/" + name }

    /// Loads the directory (which must exist and be locked by the caller).
    package func open() throws(DatabaseError) -> Opened {
        let names = try FileReader.list(self.directory)
        var notes: [String] = []
        for name in names where name.hasSuffix(".tmp") {
            try self.files.remove(self.path(name))
            notes.append("removed \(name), left by an interrupted checkpoint")
        }
        var (checkpoints, segments) = JournalFormat.storeFiles(in: names)

        var root = Node.empty
        var checkpointSequence: UInt64 = 0
        var checkpointBytes = 0
        if let newest = checkpoints.last {
            guard let bytes = try FileReader.read(self.path(newest.0)) else {
                throw DatabaseError(.ioError, "The checkpoint \(self.path(newest.0)) disappeared while opening.")
            }
            let decoded = try bytes.withBytes { raw throws(DatabaseError) in try CheckpointFormat.decode(raw, fileName: self.path(newest.0))
            }
            guard decoded.sequence == newest.1 else {
                throw DatabaseError(
                    .corrupted,
                    "The checkpoint \(self.path(newest.0)) is damaged at offset 0: it covers record \(decoded.sequence), not the \(newest.1) its name says."
                )
            }
            root = decoded.root
            checkpointSequence = decoded.sequence
            checkpointBytes = bytes.count
            for older in checkpoints.dropLast() {
                try self.files.remove(self.path(older.0))
                notes.append("removed \(older.0), superseded by \(newest.0)")
            }
        }

        // Segments wholly covered by the checkpoint are leftovers of a crash right after it.
        while segments.count > 1 && segments[1].1 <= checkpointSequence &+ 1 {
            try self.files.remove(self.path(segments[0].0))
            notes.append("removed \(segments[0].0), covered by the checkpoint")
            segments.removeFirst()
        }

        let engine = SyncEngine(root: root)
        var last = checkpointSequence
        var journalBytes = 0
        var replayed = 0
        var append: (path: String, offset: Int)?
        for (index, segment) in segments.enumerated() {
            let segmentPath = self.path(segment.0)
            let isLast = index == segments.count - 1
            guard let bytes = try FileReader.read(segmentPath) else { continue }
            if isLast && bytes.count <= JournalFormat.headerSize && bytes.withUnsafeBytes({ JournalFormat.parseHeader($0) }) == nil {
                // A crash while starting this segment: nothing was ever appended to it.
                try self.files.remove(segmentPath)
                notes.append("removed \(segment.0), whose creation was interrupted")
                break
            }
            if segment.1 > last &+ 1 {
                throw DatabaseError(
                    .corrupted,
                    "The journal file \(segmentPath) is damaged at offset 0: it starts at record \(segment.1) but the records before it end at \(last); records are missing."
                )
            }
            let scan = try bytes.withBytes { raw throws(DatabaseError) in
                try JournalReader.scan(raw, fileName: segmentPath) { sequence, now, write throws(DatabaseError) in
                    guard sequence > last else { return }
                    do throws(DatabaseError) {
                        _ = try engine.apply(write, now: now)
                    } catch {
                        throw DatabaseError(
                            .corrupted,
                            "The journal file \(segmentPath) holds record \(sequence), which cannot be replayed: \(error.message)")
                    }
                    last = sequence
                    replayed += 1
                }
            }
            guard scan.firstSequence == segment.1 else {
                throw DatabaseError(
                    .corrupted,
                    "The journal file \(segmentPath) is damaged at offset 0: its header names record \(scan.firstSequence), not the \(segment.1) its name says."
                )
            }
            if let torn = scan.tornTail {
                guard isLast else {
                    throw DatabaseError(
                        .corrupted,
                        "The journal file \(segmentPath) is damaged at offset \(torn.offset): \(torn.reason), and later journal files follow it."
                    )
                }
                let fd = try self.files.openForAppend(segmentPath)
                defer { self.files.io.close(fd) }
                try self.files.truncate(fd, to: scan.validEnd, path: segmentPath)
                try self.files.sync(fd, path: segmentPath)
                notes.append(
                    "cut a torn record off the end of \(segment.0) at offset \(torn.offset) (\(torn.length) bytes: \(torn.reason)); it was never acknowledged"
                )
            }
            journalBytes += scan.validEnd
            if isLast { append = (segmentPath, scan.validEnd) }
        }

        let segmentPath: String
        let offset: Int
        if let append {
            segmentPath = append.path
            offset = append.offset
        } else {
            segmentPath = self.path(JournalFormat.segmentName(firstSequence: last &+ 1))
            let header = JournalFormat.header(firstSequence: last &+ 1)
            let fd = try self.files.openForAppend(segmentPath)
            defer { self.files.io.close(fd) }
            try self.files.truncate(fd, to: 0, path: segmentPath)
            try header.withBytes { raw throws(DatabaseError) in try self.files.writeAll(fd, raw, path: segmentPath) }
            try self.files.sync(fd, path: segmentPath)
            try self.files.syncDirectory(self.directory)
            offset = header.count
        }
        let fd = try self.files.openForAppend(segmentPath)
        let start = DurableStore.Start(
            root: engine.root, lastSequence: last, checkpointSequence: checkpointSequence, checkpointBytes: checkpointBytes,
            journalBytes: journalBytes, replayedRecords: replayed, notes: notes)
        return Opened(start: start, segmentPath: segmentPath, segmentFD: fd, segmentOffset: offset)
    }
}
