import Canopy
import CanopyCluster
import CanopyCore

/// A namespace served by this node as its cluster leader: the cluster's store, the lease it was
/// taken under, and the journal (its log) its database writes to.
struct ClusterBinding: Sendable {
    let store: ClusterStore
    let lease: NamespaceLease
    let journal: ClusterJournal

    /// Runs the onDisconnect writes of connections that are gone: held by nodes no longer alive
    /// (earlier leaders, followers that died) and, with `includingOwn`, by this node before it
    /// took the namespace. Each runs once: its registration is deleted in the transaction that
    /// appends it. They were judged by the rules when they were registered.
    func runOrphanedOnDisconnect(on namespace: Namespace, node: Int32, includingOwn: Bool, logger: (String) -> Void) async {
        let orphans: [OnDisconnectWrite]
        do {
            orphans = try await self.store.orphanedOnDisconnectWrites(of: [self.lease.namespace], node: node, includingOwn: includingOwn)
        } catch {
            return logger("Reading the onDisconnect writes of namespace \(self.lease.namespace) failed: \(error.message)")
        }
        await self.run(orphans, on: namespace, logger: logger)
    }

    /// Runs `orphans`, onDisconnect writes of `namespace` (led here) whose connections are gone.
    func run(_ orphans: [OnDisconnectWrite], on namespace: Namespace, logger: (String) -> Void) async {
        for orphan in orphans {
            let write: WriteOperation
            do throws(DatabaseError) {
                write = try LogRecord.decode(orphan.write, in: "onDisconnect registration \(orphan.id)").write
            } catch {
                logger("The onDisconnect write \(orphan.id) of namespace \(self.lease.namespace) is damaged: \(error.message)")
                continue
            }
            // Judged by the rules when it was registered; its registration goes in the
            // transaction that appends it.
            switch await namespace.submit(ClientWrite(write: write, identity: .admin, registration: orphan.id)) {
            case .written: continue
            case .failed(let error):
                logger("The onDisconnect write \(orphan.id) of namespace \(self.lease.namespace) failed: \(error.message)")
            case .denied, .stale, .changed:
                logger("The onDisconnect write \(orphan.id) of namespace \(self.lease.namespace) was refused.")
            }
        }
    }
}
