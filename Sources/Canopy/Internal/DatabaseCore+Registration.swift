import CanopyCore

extension DatabaseCore {
    /// Registers an observer: at once on an embedded database, from the `.info` tree for `.info`
    /// paths, and once its location is complete in the cache on a remote one. Loop thread only.
    func register(_ registration: EventRegistration, query: DatabaseQuery) {
        let engine = self.engine(for: query.path)
        let register = { [self] in self.deliver(engine.register(registration, at: query.path, params: query.params)) }
        if query.path.isInfo {
            register()
        } else {
            self.backend.register(registration, at: query.path, params: query.params, register: register)
        }
    }

    /// Removes a registration from whichever engine holds it, and from the metadata watchers and
    /// the server listens. Loop thread only.
    func unregister(_ registration: EventRegistration) {
        if !self.engine.unregister(registration) { _ = self.infoEngine.unregister(registration) }
        self.metadataWatchers.remove(DatabaseHandle(registration.id))
        self.backend.unregistered(registration)
    }

    /// Ends an observer with `error` (its cancel block runs). Loop thread only.
    package func cancel(_ registration: EventRegistration, error: DatabaseError) {
        self.end(registration, error: error)
    }

    /// Applies a write to the local tree and delivers its events, and nothing else: no journal, no
    /// triggers, no server (a remote database's cache). Loop thread only.
    package func applyLocally(_ write: WriteOperation, now: Int64, failed: (DatabaseError) -> Void) {
        let events: [Event]
        do throws(DatabaseError) {
            events = try self.engine.apply(write, now: now)
        } catch {
            failed(error)
            return
        }
        self.releaseReplaced()
        self.deliver(events)
        self.deliverViewChanges()
        self.deliverAggregateChanges()
    }

    /// The `.info` tree's contents.
    static func infoTree(connected: Bool, serverTimeOffset: Int64) -> Node {
        var root = Node.empty
        root.set(.leaf(.bool(connected)), at: [ChildKey(".info"), ChildKey("connected")][...])
        root.set(.leaf(.int(serverTimeOffset)), at: [ChildKey(".info"), ChildKey("serverTimeOffset")][...])
        return root
    }

    /// Updates `.info/connected` and `.info/serverTimeOffset`. Loop thread only.
    package func setInfo(connected: Bool, serverTimeOffset: Int64) {
        let tree = Self.infoTree(connected: connected, serverTimeOffset: serverTimeOffset)
        guard let events = try? self.infoEngine.apply(.set(.root, WriteValue(node: tree)), now: self.clock()) else { return }
        self.deliver(events)
    }
}
