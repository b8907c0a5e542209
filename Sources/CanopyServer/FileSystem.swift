import Foundation

/// Files the server writes (the rules document).
enum FileSystem {
    /// Writes `bytes` to `path` through a temporary file and a rename.
    static func writeAtomically(_ bytes: [UInt8], to path: String) -> Bool {
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            return true
        } catch {
            return false
        }
    }
}
