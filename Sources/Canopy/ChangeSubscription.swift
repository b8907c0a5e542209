/// A ``LoopAccess/followChanges(_:)`` registration; `cancel()` ends it (from any thread).
package final class ChangeSubscription: Sendable {
    let id: UInt64
    weak let core: DatabaseCore?

    init(id: UInt64, core: DatabaseCore) {
        self.id = id
        self.core = core
    }

    package func cancel() {
        guard let core = self.core else { return }
        let id = self.id
        core.perform { [core] in core.removeChangeListener(id) }
    }
}
