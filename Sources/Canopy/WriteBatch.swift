import CanopyCore
import Synchronization

/// Writes to any locations, committed together as one write by ``commit()`` (Firestore's
/// `WriteBatch`): one journal record, and observers see all of the batch or none of it.
///
/// Each write is validated when it is added (an invalid one throws and is not added); the batch
/// applies them in the order they were added, as if one after another, so a later write to a location
/// an earlier one wrote wins, and server values resolve as they would in sequence.
///
/// ```swift
/// let batch = db.batch()
/// try batch.setValue(post, for: db.reference(withPath: "posts/\(key)"))
/// try batch.setValue(post, for: db.reference(withPath: "user-posts/\(uid)/\(key)"))
/// try batch.removeValue(for: db.reference(withPath: "drafts/\(key)"))
/// try await batch.commit()
/// ```
///
/// A batch may be built on any thread (it is thread-safe) and committed once. Against a server
/// (`Database(url:)`, module `CanopyRemote`) a batch is queued while offline like any write.
public final class WriteBatch: Sendable {
    let database: Database
    private let state = Mutex<(writes: [WriteOperation], committed: Bool)>(([], false))

    init(database: Database) {
        self.database = database
    }

    /// Adds a write replacing the data at `ref` with `value` (as ``DatabaseReference/setValue(_:)``).
    ///
    /// - Throws: `DatabaseError` naming the invalid key, value or path (nothing is added then);
    ///   `.invalidOperation` once the batch is committed, or for a reference to another database.
    /// - Complexity: O(*s*) to validate a value of *s* nodes.
    @discardableResult
    public func setValue(_ value: Any?, for ref: DatabaseReference) throws(DatabaseError) -> WriteBatch {
        try self.add(try self.checked(ref, "setValue") { () throws(DatabaseError) in try WriteBuilder.set(ref, value) }, "setValue")
    }

    /// Adds a write of the relative paths of `values` below `ref` (as
    /// ``DatabaseReference/updateChildValues(_:)``).
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(*s* + *e* · *d*) to validate *e* entries of *s* nodes at depth *d*.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any], for ref: DatabaseReference) throws(DatabaseError) -> WriteBatch {
        try self.add(
            try self.checked(ref, "updateChildValues") { () throws(DatabaseError) in try WriteBuilder.update(ref, values) },
            "updateChildValues")
    }

    /// `updateChildValues(_:for:)` for a dictionary with `String` keys (what a dictionary
    /// literal is), which is then not bridged to `AnyHashable` keys.
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(*s* + *e* · *d*) to validate *e* entries of *s* nodes at depth *d*.
    @discardableResult
    public func updateChildValues(_ values: [String: Any], for ref: DatabaseReference) throws(DatabaseError) -> WriteBatch {
        try self.add(
            try self.checked(ref, "updateChildValues") { () throws(DatabaseError) in try WriteBuilder.update(ref, values) },
            "updateChildValues")
    }

    /// Adds a write removing the data at `ref`.
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(1).
    @discardableResult
    public func removeValue(for ref: DatabaseReference) throws(DatabaseError) -> WriteBatch {
        try self.add(
            try self.checked(ref, "removeValue") { () throws(DatabaseError) in try WriteBuilder.set(ref, nil, function: "remove") },
            "removeValue")
    }

    /// Commits the batch: applies its writes together, as one write, on the loop; `completion` runs
    /// on the loop thread once it is applied (on a database opened at a path, once it is durable under
    /// its ``SyncPolicy``), or with the error that refused it. An empty batch commits nothing and
    /// succeeds. A second commit fails with `.invalidOperation`.
    ///
    /// - Complexity: O(*e* · *d*) on the loop to compose *e* entries at depth *d* into one write (more where
    ///   they overlap), then as ``DatabaseReference/updateChildValues(_:)`` with those entries.
    public func commit(completion: (((any Error)?) -> Void)?) {
        let done = LoopCallback(completion)
        self.start { error in done.value?(error) }
    }

    /// ``commit(completion:)`` that returns once the batch is applied (durable, on a database opened
    /// at a path).
    ///
    /// - Complexity: As ``commit(completion:)``.
    public func commit() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.start { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
    }

    private func start(_ completion: @escaping @Sendable (DatabaseError?) -> Void) {
        let writes: [WriteOperation]? = self.state.withLock { state in
            guard !state.committed else { return nil }
            state.committed = true
            defer { state.writes = [] }
            return state.writes
        }
        let core = self.database.core
        guard let writes else {
            let error = DatabaseError(.invalidOperation, "WriteBatch.commit failed: the batch was already committed.")
            if !core.perform({ completion(error) }) { completion(error) }
            return
        }
        if !core.perform({ [core] in core.commit(writes, completion: completion) }) { completion(DatabaseCore.closedError) }
    }

    private func checked(_ ref: DatabaseReference, _ function: String, _ build: () throws(DatabaseError) -> WriteOperation)
        throws(DatabaseError) -> WriteOperation
    {
        guard ref.database === self.database else {
            throw DatabaseError(.invalidOperation, "WriteBatch.\(function) failed: \(ref.pathString) is a reference to another database.")
        }
        return try build()
    }

    private func add(_ write: WriteOperation, _ function: String) throws(DatabaseError) -> WriteBatch {
        try self.state.withLock { state throws(DatabaseError) in
            guard !state.committed else {
                throw DatabaseError(.invalidOperation, "WriteBatch.\(function) failed: the batch was already committed.")
            }
            state.writes.append(write)
        }
        return self
    }
}

extension Database {
    /// A new, empty ``WriteBatch`` of writes to commit together.
    ///
    /// - Complexity: O(1).
    public func batch() -> WriteBatch { WriteBatch(database: self) }
}
