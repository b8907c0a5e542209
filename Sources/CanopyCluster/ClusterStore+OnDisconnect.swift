public import CanopyCore
public import NIOCore
import PostgresNIO

/// A write a client registered to run when its connection closes, kept in PostgreSQL so that the
/// namespace's next leader can run it when the node that held the connection died.
public struct OnDisconnectWrite: Sendable, Equatable {
    public var id: Int64
    /// The node that held the client's connection.
    public var node: Int32
    public var session: String
    /// The write, encoded as a log record is.
    public var write: ByteBuffer
    /// Its namespace, when read for several.
    public var namespace: String?
}

extension ClusterStore {
    /// Registers `write` to run when `session`'s connection (held by `lease`'s node) closes.
    ///
    /// - Returns: Its id, for ``cancelOnDisconnect(_:in:)`` and
    ///   ``append(_:from:under:runningOnDisconnect:)``.
    /// - Throws: `.notLeader` when the lease's epoch is no longer the namespace's.
    /// `through`: the node holding the connection, when it is not the leader's (a follower
    /// forwarded the registration).
    public func addOnDisconnect(_ write: ByteBuffer, session: String, under lease: NamespaceLease, through node: Int32? = nil)
        async throws(DatabaseError) -> Int64
    {
        let what = "registering an onDisconnect write in namespace \(lease.namespace)"
        let rows = try await self.run(
            """
            WITH lease AS (SELECT 1 FROM canopy.namespaces WHERE name = \(lease.namespace) AND epoch = \(lease.epoch) FOR SHARE)
            INSERT INTO canopy.on_disconnect (namespace, node, session, write)
            SELECT \(lease.namespace), \(node ?? lease.node), \(session), \(write) FROM lease RETURNING id
            """, doing: what)
        guard let row = rows.first else {
            throw DatabaseError(
                .notLeader,
                "Namespace \(lease.namespace) is no longer led at epoch \(lease.epoch): the onDisconnect write was not registered.")
        }
        return try Self.decode(row, as: (Int64).self, doing: what, self.configuration)
    }

    /// Forgets the onDisconnect writes `ids` of `namespace` (a client cancelled them, or its
    /// connection closed and they ran, or the rules refused them when they were to run).
    public func cancelOnDisconnect(_ ids: [Int64], in namespace: String) async throws(DatabaseError) {
        try await self.run(
            "DELETE FROM canopy.on_disconnect WHERE namespace = \(namespace) AND id = ANY(\(ids)::bigint[])",
            doing: "cancelling onDisconnect writes in namespace \(namespace)")
    }

    /// The onDisconnect writes of `namespace` registered through `node`, oldest first.
    public func onDisconnectWrites(of namespace: String, node: Int32) async throws(DatabaseError) -> [OnDisconnectWrite] {
        let what = "reading the onDisconnect writes of namespace \(namespace)"
        let rows = try await self.run(
            "SELECT id, node, session, write FROM canopy.on_disconnect WHERE namespace = \(namespace) AND node = \(node) ORDER BY id",
            doing: what)
        return try self.onDisconnectWrites(rows, doing: what)
    }

    /// The onDisconnect writes of `namespace` whose connections are gone, oldest first: those
    /// registered through nodes that are no longer alive and, with `includingOwn`, those
    /// registered through `node` itself (what a node runs as it takes the namespace: every
    /// connection it held to the namespace was closed when it stopped serving it).
    /// One statement for all of `namespaces` (a leader checks those it leads after each
    /// heartbeat).
    public func orphanedOnDisconnectWrites(of namespaces: [String], node: Int32, includingOwn: Bool) async throws(DatabaseError)
        -> [OnDisconnectWrite]
    {
        guard !namespaces.isEmpty else { return [] }
        let what =
            "reading the onDisconnect writes of \(namespaces.count == 1 ? "namespace \(namespaces[0])" : "\(namespaces.count) namespaces")"
        let rows = try await self.run(
            """
            SELECT id, node, session, write, namespace FROM canopy.on_disconnect
             WHERE namespace = ANY(\(namespaces)::text[])
               AND CASE WHEN node = \(node) THEN \(includingOwn) ELSE NOT canopy.node_alive(node) END
             ORDER BY id
            """, doing: what)
        var writes: [OnDisconnectWrite] = []
        for row in rows {
            let (id, node, session, write, namespace) = try Self.decode(
                row, as: (Int64, Int32, String, ByteBuffer, String).self, doing: what, self.configuration)
            writes.append(OnDisconnectWrite(id: id, node: node, session: session, write: write, namespace: namespace))
        }
        return writes
    }

    private func onDisconnectWrites(_ rows: [PostgresRow], doing what: String) throws(DatabaseError) -> [OnDisconnectWrite] {
        var writes: [OnDisconnectWrite] = []
        for row in rows {
            let (id, node, session, write) = try Self.decode(
                row, as: (Int64, Int32, String, ByteBuffer).self, doing: what, self.configuration)
            writes.append(OnDisconnectWrite(id: id, node: node, session: session, write: write))
        }
        return writes
    }

    /// Appends `records` (the writes of the onDisconnect registrations `ids`) and deletes those
    /// registrations, in one transaction: the writes run once, whichever node tries.
    ///
    /// - Throws: `.notLeader` when the lease's epoch moved on, or when one of the registrations is
    ///   gone (another node ran or cancelled it): nothing was appended.
    public func append(_ records: [ByteBuffer], from first: Int64, under lease: NamespaceLease, runningOnDisconnect ids: [Int64])
        async throws(DatabaseError)
    {
        let namespace = lease.namespace
        do {
            try await self.client.withTransaction(logger: self.logger) { connection in
                let deleted = try await connection.query(
                    "DELETE FROM canopy.on_disconnect WHERE namespace = \(namespace) AND id = ANY(\(ids)::bigint[]) RETURNING id",
                    logger: self.logger)
                var count = 0
                for try await _ in deleted { count += 1 }
                guard count == Set(ids).count else {
                    throw DatabaseError(.notLeader, "The onDisconnect writes of namespace \(namespace) already ran or were cancelled.")
                }
                let appended = try await connection.query(Self.fencedAppend(records, from: first, under: lease), logger: self.logger)
                var inserted: Int64 = 0
                for try await value in appended.decode(Int64.self) { inserted = value }
                guard inserted == Int64(records.count) else {
                    throw DatabaseError(
                        .notLeader, "Namespace \(namespace) is no longer led at epoch \(lease.epoch): nothing was appended.")
                }
            }
        } catch {
            let failure = Self.failure(error, doing: "running onDisconnect writes in namespace \(namespace)", self.configuration)
            if failure.code == .inUse {
                throw DatabaseError(
                    .notLeader, "The log of namespace \(namespace) already has a record at \(first) or after: another leader appended.")
            }
            throw failure
        }
    }
}
