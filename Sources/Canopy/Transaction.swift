import CanopyCore

/// The reads and writes of one ``Database/runTransaction(_:)`` block: read any number of locations
/// with ``getData(_:)``, then write any others with ``setValue(_:for:)``,
/// ``updateChildValues(_:for:)-([AnyHashable:Any],_)`` and ``removeValue(for:)``. The writes are committed together, as one
/// write, when the block returns, or not at all when it throws.
///
/// Reads come first: ``getData(_:)`` after a write throws. The transaction is valid only inside its
/// block; used afterwards, every method throws.
public final class Transaction {
    let database: Database
    // Unchecked exclusivity: a transaction is used on the loop thread only, and each access below
    // is a single read, append or assignment that calls nothing which could access it again, so
    // the dynamic checks (one per read and per write of the block) cannot fail.
    /// The locations read, kept for a remote database only (it checks their hashes at commit).
    /// Only paths: holding the nodes read would make the commit copy the tree's nodes along them.
    @exclusivity(unchecked) package private(set) var reads: [DatabasePath] = []
    @exclusivity(unchecked) package private(set) var writes: [WriteOperation] = []
    @exclusivity(unchecked) private var finished = false
    /// What reports the block's value once the writes are committed (set when the block returned).
    @exclusivity(unchecked) var report: ((DatabaseError?) -> Void)?

    init(database: Database) {
        self.database = database
    }

    /// The data at `ref` now. Loop thread (inside the block).
    ///
    /// - Throws: `DatabaseError` `.invalidOperation` after a write, after the block returned, or
    ///   for a reference to another database; the reference's own error for an invalid one.
    /// - Complexity: O(*d* log *n*) at depth *d*; the snapshot shares storage with the tree.
    public func getData(_ ref: DatabaseReference) throws(DatabaseError) -> DataSnapshot {
        try self.check(ref, function: "getData")
        if let error = ref.constraintError { throw error }
        guard self.writes.isEmpty else {
            throw DatabaseError(
                .invalidOperation,
                "Transaction.getData failed: \(ref.pathString) is read after a write; a transaction reads every location it needs before it writes."
            )
        }
        let node = self.database.core.engine.node(at: ref.path)
        if self.database.core.backend.tracksTransactionReads { self.reads.append(ref.path) }
        return DataSnapshot(node: node, path: ref.path, database: self.database, metadata: self.database.core.metadata(at: ref.path))
    }

    /// Replaces the data at `ref` with `value` (as ``DatabaseReference/setValue(_:)``) when the
    /// transaction commits.
    ///
    /// - Throws: `DatabaseError` naming the invalid key, value or path (nothing is added then), or
    ///   `.invalidOperation` as ``getData(_:)``.
    /// - Complexity: O(*s*) to validate a value of *s* nodes.
    @discardableResult
    public func setValue(_ value: Any?, for ref: DatabaseReference) throws(DatabaseError) -> Transaction {
        try self.add(ref, function: "setValue") { () throws(DatabaseError) in try WriteBuilder.set(ref, value) }
    }

    /// Writes the relative paths of `values` below `ref` (as ``DatabaseReference/updateChildValues(_:)``)
    /// when the transaction commits.
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(*s* + *e* · *d*) to validate *e* entries of *s* nodes at depth *d*.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any], for ref: DatabaseReference) throws(DatabaseError) -> Transaction {
        try self.add(ref, function: "updateChildValues") { () throws(DatabaseError) in try WriteBuilder.update(ref, values) }
    }

    /// `updateChildValues(_:for:)` for a dictionary with `String` keys (what a dictionary
    /// literal is), which is then not bridged to `AnyHashable` keys.
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(*s* + *e* · *d*) to validate *e* entries of *s* nodes at depth *d*.
    @discardableResult
    public func updateChildValues(_ values: [String: Any], for ref: DatabaseReference) throws(DatabaseError) -> Transaction {
        try self.add(ref, function: "updateChildValues") { () throws(DatabaseError) in try WriteBuilder.update(ref, values) }
    }

    /// Removes the data at `ref` when the transaction commits.
    ///
    /// - Throws: As ``setValue(_:for:)``.
    /// - Complexity: O(1).
    @discardableResult
    public func removeValue(for ref: DatabaseReference) throws(DatabaseError) -> Transaction {
        try self.add(ref, function: "removeValue") { () throws(DatabaseError) in try WriteBuilder.set(ref, nil, function: "remove") }
    }

    /// Checks `ref` for `function`, then adds the write `build` makes, with room for a few from the
    /// first (most transactions make two to four, which then take one allocation); returns `self`.
    private func add(_ ref: DatabaseReference, function: String, _ build: () throws(DatabaseError) -> WriteOperation)
        throws(DatabaseError) -> Transaction
    {
        try self.check(ref, function: function)
        let write = try build()
        if self.writes.isEmpty { self.writes.reserveCapacity(4) }
        self.writes.append(write)
        return self
    }

    /// Ends the transaction: later calls throw.
    func finish() { self.finished = true }

    private func check(_ ref: DatabaseReference, function: String) throws(DatabaseError) {
        guard !self.finished else {
            throw DatabaseError(
                .invalidOperation,
                "Transaction.\(function) failed: the transaction is over (its block returned); use it only inside the block.")
        }
        guard ref.database === self.database else {
            throw DatabaseError(
                .invalidOperation, "Transaction.\(function) failed: \(ref.pathString) is a reference to another database.")
        }
    }
}
