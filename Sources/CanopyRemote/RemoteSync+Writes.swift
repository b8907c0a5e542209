import Canopy
import CanopyConnection
import CanopyCore
import CanopyLoop
import CanopyWire
import Logging

extension RemoteSync {
    /// A local write: applied to the cache now (its events fire), queued, sent to the server when
    /// connected; `completion` gets the server's answer.
    func localWrite(
        _ write: WriteOperation, hash: String? = nil, readHashes: [(path: DatabasePath, hash: String)] = [],
        completion: (@Sendable (DatabaseError?) -> Void)?
    ) {
        let now = self.serverNow
        let root = self.core.engine.root
        var resolved: [(path: [ChildKey], node: Node)] = []
        resolved.reserveCapacity(write.entries.count)
        for index in write.entries.indices {
            resolved.append((write.entries[index].path, write.resolvedNode(ofEntry: index, root: root, now: now)))
        }
        let pendingWrite = PendingWrite(id: self.nextWriteID, write: write, resolved: resolved, hash: hash, completion: completion)
        pendingWrite.readHashes = readHashes
        // Pending before its events fire, so their snapshots say so.
        self.core.pendingWritesBegan(pendingWrite)
        var failure: DatabaseError?
        // A priority for data the cache does not hold (outside every query's window) is the
        // server's to judge: the write goes to it, and its events come with the server's data.
        let unknown = write.requiresExistingNode && root.node(at: write.path.keys).isEmpty && !self.isComplete(write.path)
        if !unknown { self.core.applyLocally(pendingWrite.resolvedOperation, now: now) { failure = $0 } }
        if let failure {
            self.core.pendingWritesEnded(pendingWrite)
            completion?(failure)
            return
        }
        self.nextWriteID += 1
        self.pending.append(pendingWrite)
        self.completedLocally(by: pendingWrite)
        if let limit = self.options.acknowledgementTimeout, completion != nil {
            pendingWrite.timeout = self.core.loop.schedule(after: limit) { [weak pendingWrite] in
                guard let pendingWrite, let completion = pendingWrite.completion else { return }
                pendingWrite.completion = nil
                completion(
                    DatabaseError(
                        .disconnected,
                        "The server did not acknowledge the write at \(pendingWrite.write.path.string) within \(limit); it stays queued and is sent when the connection allows."
                    ))
            }
        }
        self.persistQueued(pendingWrite)
        if self.isConnected { self.send(pendingWrite) }
    }

    /// Sends a queued write on the current connection.
    func send(_ write: PendingWrite) {
        let operation = write.write
        let hash = write.hash
        let request: RequestBuilder
        if write.readHashes.isEmpty {
            request = { .write(id: $0, operation, hash: hash) }
        } else {
            // As a merge at the parent when an entry replaces the write's own location.
            var path = operation.path
            var prefix: [ChildKey] = []
            if operation.entries.contains(where: { $0.path.isEmpty }), let parent = operation.path.parent, let last = operation.path.last {
                path = parent
                prefix = [last]
            }
            let members = operation.entries.map { (path: prefix + $0.path, data: $0.value.wireJSON) }
            let reads = write.readHashes
            request = { .transactionMerge(id: $0, path: path, members: members, readHashes: reads) }
        }
        self.send(request) { [weak self, weak write] outcome in
            guard let self, let write else { return }
            switch outcome {
            case .ok:
                self.finish(write, error: nil)
            case .failed(let status, let message):
                self.finish(write, error: DatabaseError(serverStatus: status, message: message, path: write.write.path))
            case .disconnected, .closed:
                break  // still queued: sent again on reconnect (or, closed, failed by `close()`)
            }
        }
    }

    /// Takes `write` out of the queue: acknowledged (`error == nil`) or refused (reverted).
    func finish(_ write: PendingWrite, error: DatabaseError?) {
        guard self.pending.remove(write) else { return }
        write.timeout?.cancel()
        self.unpersistQueued(write)
        self.core.pendingWritesEnded(write)
        let locations = write.locations
        if error == nil {
            // Where nothing keeps the cache in step, the acknowledged write is the server's data as last known.
            for (location, entry) in zip(locations, write.resolved) where !self.isComplete(location) {
                self.serverRoot.set(entry.node, at: (write.write.path.keys + entry.path)[...])
            }
        }
        self.refresh(Self.outermost(locations + (error == nil ? self.rederiveQueries(touching: locations) : [])))
        let completion = write.completion
        write.completion = nil
        completion?(error)
    }

    // MARK: - The server's data

    func serverPut(_ node: Node, at path: DatabasePath) {
        self.serverRoot.set(node, at: path.keys[...])
        self.persistServer(node, at: path)
        self.refresh(Self.outermost([path] + self.rederiveQueries(touching: [path])))
    }

    func serverMerge(_ entries: [(path: [ChildKey], node: Node)], at path: DatabasePath) {
        var locations: [DatabasePath] = []
        for (relative, node) in entries {
            let location = DatabasePath(path.keys + relative)
            self.serverRoot.set(node, at: location.keys[...])
            self.persistServer(node, at: location)
            locations.append(location)
        }
        self.refresh(Self.outermost(locations + self.rederiveQueries(touching: locations)))
    }

    /// Recomputes what the app sees at `locations` (none inside another): the server's data with
    /// the pending writes that touch it applied in order. The engine raises only real changes.
    func refresh(_ locations: [DatabasePath]) {
        guard !locations.isEmpty else { return }
        var entries: [WriteOperation.Entry] = []
        let base = Self.commonAncestor(locations)
        for location in locations {
            let node: Node
            if self.core.pendingWrites.hasPending(overlapping: location) {
                var root = self.serverRoot
                for write in self.pending where write.overlaps(location) { write.apply(to: &root) }
                node = root.node(at: location.keys)
            } else {
                node = self.serverRoot.node(at: location.keys)
            }
            entries.append(.init(path: Array(location.keys.dropFirst(base.keys.count)), value: WriteValue(node: node)))
        }
        self.core.applyLocally(WriteOperation(path: base, entries: entries), now: self.serverNow) { _ in }
    }

    /// `paths` without any that another one contains (sorted, deduplicated).
    static func outermost(_ paths: [DatabasePath]) -> [DatabasePath] {
        var result: [DatabasePath] = []
        for path in paths.sorted(by: <) where !(result.last?.contains(path) ?? false) { result.append(path) }
        return result
    }

    static func commonAncestor(_ paths: [DatabasePath]) -> DatabasePath {
        guard var keys = paths.first?.keys else { return .root }
        for path in paths.dropFirst() {
            var n = 0
            while n < keys.count && n < path.keys.count && keys[n] == path.keys[n] { n += 1 }
            keys.removeLast(keys.count - n)
        }
        return DatabasePath(keys)
    }
}

extension DatabaseError {
    /// The error for a request the server refused with `status`.
    init(serverStatus status: String, message: String, path: DatabasePath) {
        switch status {
        case "permission_denied":
            self.init(.permissionDenied, "Permission denied at \(path.string): the server's rules refused it.")
        case "datastale":
            self.init(.dataStale, "The data at \(path.string) changed on the server first (datastale).")
        default:
            self.init(
                .writeFailed, "The server refused the request at \(path.string): \(status)\(message == status ? "" : ": \(message)").")
        }
    }
}
