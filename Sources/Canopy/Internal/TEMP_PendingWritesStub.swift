import CanopyCore

// TEMPORARY until i18-meta merges (delete before merging).
struct PendingWrites {
    typealias Token = Int
    func begin(_ write: WriteOperation) -> Token { 0 }
    func end(_ token: Token) {}
}

extension DatabaseCore {
    var pendingWrites: PendingWrites { PendingWrites() }
    func metadataChanged(at path: DatabasePath) {}
}
