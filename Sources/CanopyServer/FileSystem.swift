import CanopyCore
import CanopyStorage

/// Files the server writes (the rules document).
enum FileSystem {
    /// Replaces `path` with `bytes` durably, the way storage writes its checkpoints: a temporary
    /// file, `fsync`, `rename`, then an `fsync` of the file's directory. Once this returns true,
    /// a crash or power loss leaves the new file; before, the old one.
    static func writeDurably(_ bytes: [UInt8], to path: String) -> Bool {
        let files = StorageFiles(io: POSIXFileIO())
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        return bytes.withUnsafeBytes { raw in
            do {
                try files.writeAtomically(raw, to: path, directory: directory)
                return true
            } catch {
                return false
            }
        }
    }
}
