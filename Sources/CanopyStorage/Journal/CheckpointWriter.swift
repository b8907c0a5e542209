package import CanopyCore

/// Writes checkpoints: a snapshot of the tree as of a sequence number, after which the journal
/// segments it covers are retired.
package enum CheckpointWriter {
    /// Writes the checkpoint of `root` as of record `sequence` atomically (temporary file, fsync,
    /// rename, directory fsync), then removes older checkpoints and the journal segments before
    /// the one starting at `sequence + 1`. Runs on any thread; `root` is an immutable snapshot.
    ///
    /// - Returns: The checkpoint's size in bytes.
    package static func write(root: Node, sequence: UInt64, directory: String, files: StorageFiles) throws(DatabaseError) -> Int {
        let bytes = CheckpointFormat.encode(root: root, sequence: sequence)
        let path = directory + "/" + JournalFormat.checkpointName(sequence: sequence)
        try bytes.withBytes { raw throws(DatabaseError) in try files.writeAtomically(raw, to: path, directory: directory) }
        // The checkpoint is durable: what it covers can go. A crash in between leaves files that
        // opening recognises as covered and removes.
        for name in try FileReader.list(directory) {
            if let older = JournalFormat.sequence(inName: name, prefix: "checkpoint-", suffix: ".canopy"), older < sequence {
                try files.remove(directory + "/" + name)
            } else if let first = JournalFormat.sequence(inName: name, prefix: "journal-", suffix: ".log"), first <= sequence {
                try files.remove(directory + "/" + name)
            }
        }
        try files.syncDirectory(directory)
        return bytes.count
    }
}
