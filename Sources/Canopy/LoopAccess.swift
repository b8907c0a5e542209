import CanopyCore
import CanopyLoop
import CanopyStorage

/// Loop-thread access to a database's state, for Canopy's own server and command-line tool.
///
/// Only valid inside the ``Database/onLoop(_:)`` job that received it: everything it returns is
/// an immutable snapshot, but the calls themselves must stay on the loop thread.
package struct LoopAccess {
    let core: DatabaseCore

    /// Debug builds: stops the program unless called on the database's loop thread (compiled out
    /// in release builds). Code that keeps a ``LoopAccess`` or loop-confined state calls it first.
    package func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        self.core.loop.assertOnLoop(file: file, line: line)
    }

    /// The whole tree now.
    package var root: Node {
        self.assertOnLoop()
        return self.core.engine.root
    }

    /// The data at `path` now.
    package func node(at path: DatabasePath) -> Node {
        self.assertOnLoop()
        return self.core.engine.node(at: path)
    }

    /// What a query at `path` with `params` holds now (its window, for a limited query).
    package func queryResult(at path: DatabasePath, params: QueryParams) -> Node {
        self.assertOnLoop()
        return self.core.engine.queryResult(at: path, params: params)
    }

    /// The time server timestamps resolve to now.
    package func now() -> Int64 { self.core.clock() }

    /// Applies `write` now, in this job: nothing else runs between the caller's reads and it (so
    /// a read-compare-write here is atomic). `completion` fires on the loop thread once the write
    /// is durable under the sync policy, or with the error that refused or failed it.
    ///
    /// `applied` runs right after the write is applied (not when it fails), before the triggers it
    /// fires run: the place to read what the write itself left.
    ///
    /// `now`: the time its server values resolve to (a replica applying a leader's record);
    /// the database's clock by default.
    package func apply(
        _ write: WriteOperation, now: Int64? = nil, completion: (@Sendable (DatabaseError?) -> Void)?, applied: (() -> Void)? = nil
    ) {
        self.core.apply(write, now: now, completion: completion, applied: applied)
    }

    /// The sequence number of the last write applied to a durable database (its position in the
    /// journal, or in a cluster's log); `nil` for a database in memory.
    package var lastSequence: UInt64? {
        self.assertOnLoop()
        return self.core.store.map { $0.nextSequence &- 1 }
    }

    /// Starts following the view of `params` at `path` (shared with observers of the same query):
    /// `onChange` runs on the loop thread after every write that changes what the view shows,
    /// with the children that entered, left or changed. Returns the listener (for
    /// ``stopListening(_:)``) and what the view shows now.
    package func listen(at path: DatabasePath, params: QueryParams, onChange: @escaping (ViewChange) -> Void) -> (ViewListener, Node) {
        let listener = ViewListener(path: path, params: params, onChange: onChange)
        return (listener, self.core.engine.listen(listener))
    }

    /// Stops a ``listen(at:params:onChange:)`` listener: it gets nothing more.
    package func stopListening(_ listener: ViewListener) {
        self.core.engine.unlisten(listener)
    }

    /// The value of the aggregate `request` over the query at `path` now: O(log *n*) per field
    /// when a live aggregate keeps its indexes, else O(*n* log *n*).
    package func aggregate(at path: DatabasePath, params: QueryParams, request: AggregateRequest) -> AggregateResult {
        self.assertOnLoop()
        return self.core.engine.aggregate(at: path, params: params, request: request)
    }

    /// Starts a live aggregate (sharing its indexes with others of the same location, order and
    /// field): `onChange` runs on the loop thread after every write that changes its value.
    /// Returns the listener (for ``stopListening(_:)-(AggregateListener)``) and the value now.
    package func listen(
        at path: DatabasePath, params: QueryParams, request: AggregateRequest, onChange: @escaping (AggregateResult) -> Void
    )
        -> (AggregateListener, AggregateResult)
    {
        self.assertOnLoop()
        let listener = AggregateListener(path: path, params: params, request: request, onChange: onChange)
        return (listener, self.core.engine.listen(listener))
    }

    /// Stops a live aggregate: it gets nothing more.
    package func stopListening(_ listener: AggregateListener) {
        self.core.engine.unlisten(listener)
    }

    /// Starts following writes: `change` runs on the loop thread after every write applied from
    /// now on, in commit order, with the write and the whole tree after it.
    package func followChanges(_ change: @escaping (WriteOperation, Node) -> Void) -> ChangeSubscription {
        self.core.addChangeListener(change)
    }
}
