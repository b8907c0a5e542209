import CanopyCore

/// The writes applied locally but not yet confirmed, as a trie of the locations they touch, so
/// that whether a location has pending writes is answered in O(depth), never by a scan.
///
/// Writes enter the trie lazily: ``begin(_:)`` only queues them, and the first
/// ``hasPending(overlapping:)`` after indexes those queued (each write once). A write that ends
/// before anyone asks, the usual case for a durable database nobody observes, never touches the
/// trie.
///
/// A database opened at a path begins a write when it is applied (its events raised) and ends it
/// when its journal record is durable (or failed); a database connected to a server begins a
/// local write when it is applied locally and ends it when the server acknowledges or rejects it.
/// When a write ends, ``settled`` is told the write, so that the observers that asked for metadata
/// changes at its ``locations(of:)`` can get one.
///
/// The locations of a write are its entries' (the location itself for a `set`, each key path of a
/// multi-path update; a priority entry counts as its node). A location has pending writes when one
/// of them is at, above or below it: siblings are independent.
///
/// Loop-thread only, like the engine (not `Sendable`).
package final class PendingWrites {
    /// One begun write, to pass to ``end(_:)`` once.
    package struct Token: Hashable, Sendable {
        fileprivate let id: UInt64
    }

    /// A trie node: `here` writes' locations are exactly this node, `atOrBelow` are here or under it.
    private final class Node {
        var children: [ChildKey: Node] = [:]
        var here = 0
        var atOrBelow = 0
    }

    private let root = Node()
    /// A begun write, and whether its locations are in the trie. The locations are worked out
    /// only when needed (to index it, or for ``settled``): most writes end unasked.
    private struct Open {
        var write: WriteOperation
        var indexed: Bool
    }
    // Unchecked exclusivity (the queue's properties): each change is an assignment, append or
    // removal that calls nothing, and ``settled`` is called once they are done, so the dynamic
    // checks (several on every write) cannot fail.
    /// The begun writes by id, `open[openHead]` being `firstID`'s (`nil`: ended). Ids are
    /// consecutive and writes usually end in order, so this is a queue, not a hash table.
    @exclusivity(unchecked) private var open: [Open?] = []
    @exclusivity(unchecked) private var openHead = 0
    @exclusivity(unchecked) private var firstID: UInt64 = 1
    @exclusivity(unchecked) private var openCount = 0
    @exclusivity(unchecked) private var nextID: UInt64 = 1
    /// The writes begun before this id are in the trie (those still pending).
    private var indexedBelow: UInt64 = 1

    /// Called by ``end(_:)`` with the write that ended (set by the owner).
    var settled: ((WriteOperation) -> Void)?

    init() {}

    /// Whether no write is pending.
    var isEmpty: Bool { self.openCount == 0 }

    /// How many writes are pending.
    var count: Int { self.openCount }

    /// The position of write `id` in ``open``, if it was begun and its slot is still kept.
    private func slot(_ id: UInt64) -> Int? {
        guard id >= self.firstID, id < self.nextID else { return nil }
        return self.openHead + Int(id - self.firstID)
    }

    /// Marks `write` pending until ``end(_:)`` gets the token returned.
    ///
    /// - Complexity: O(*e*) for *e* entries (one for a `set`), plus O(*e* · *d*) at depth *d* once, to
    ///   index it, if ``hasPending(overlapping:)`` is called while it is pending.
    package func begin(_ write: WriteOperation) -> Token {
        let id = self.nextID
        self.nextID &+= 1
        self.open.append(Open(write: write, indexed: false))
        self.openCount += 1
        return Token(id: id)
    }

    /// The locations `write` touches: one per entry (a priority entry counts as its node).
    static func locations(of write: WriteOperation) -> [DatabasePath] {
        write.entries.map { entry in
            var location = write.path
            let below = entry.isPriority ? entry.path.dropLast() : entry.path[...]
            if !below.isEmpty { location.keys += below }
            return location
        }
    }

    /// Ends the write of `token` (a token already ended is ignored), then tells ``settled``.
    ///
    /// - Complexity: O(*e* · *d*) for *e* entries at depth *d* (O(*e*) when it was never indexed), plus
    ///   what ``settled`` does; amortized O(1) to drop its slot.
    package func end(_ token: Token) {
        guard let i = self.slot(token.id), let ended = self.open[i] else { return }
        self.open[i] = nil
        self.openCount -= 1
        if ended.indexed {
            for location in Self.locations(of: ended.write) { self.remove(location.keys) }
        }
        // Drop the slots of the oldest writes that ended.
        while self.openHead < self.open.count && self.open[self.openHead] == nil {
            self.openHead += 1
            self.firstID &+= 1
        }
        self.open.compactConsumed(head: &self.openHead)
        self.settled?(ended.write)
    }

    /// Whether a pending write touches `path`, a location above it or one below it.
    ///
    /// - Complexity: O(*d*) at depth *d*; O(1) when nothing is pending. Amortized: the writes begun
    ///   since the last call are indexed first (see ``begin(_:)``).
    package func hasPending(overlapping path: DatabasePath) -> Bool {
        if self.openCount == 0 { return false }
        if self.indexedBelow < self.nextID { self.index() }
        var node = self.root
        guard node.atOrBelow > 0 else { return false }
        if node.here > 0 { return true }
        for key in path.keys {
            guard let child = node.children[key] else { return false }
            node = child
            if node.here > 0 { return true }
        }
        return node.atOrBelow > 0
    }

    /// Puts the writes begun since the last call and still pending into the trie.
    private func index() {
        var id = max(self.indexedBelow, self.firstID)
        while id < self.nextID, let i = self.slot(id) {
            if var write = self.open[i] {
                for location in Self.locations(of: write.write) { self.add(location.keys) }
                write.indexed = true
                self.open[i] = write
            }
            id &+= 1
        }
        self.indexedBelow = self.nextID
    }

    private func add(_ location: [ChildKey]) {
        var node = self.root
        node.atOrBelow += 1
        for key in location {
            let child: Node
            if let existing = node.children[key] {
                child = existing
            } else {
                child = Node()
                node.children[key] = child
            }
            child.atOrBelow += 1
            node = child
        }
        node.here += 1
    }

    private func remove(_ location: [ChildKey]) {
        var node = self.root
        node.atOrBelow -= 1
        for key in location {
            guard let child = node.children[key] else { return }
            child.atOrBelow -= 1
            if child.atOrBelow == 0 {
                // Nothing pending is left under it: drop the branch.
                node.children[key] = nil
                return
            }
            node = child
        }
        node.here -= 1
    }
}
