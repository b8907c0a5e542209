import CanopyCore

extension DatabaseReference {
    /// Has the server set this location to `value` when this client disconnects (closes, loses its
    /// network, or its process dies). The server keeps the operation until then, across this
    /// client's reconnects. Only on a database connected to a server (`Database(url:)`);
    /// an embedded database never disconnects, so it refuses with `DatabaseError.Code.invalidOperation`.
    ///
    /// ```swift
    /// let presence = db.reference(withPath: "status/\(uid)")
    /// try await presence.onDisconnectSetValue("offline")
    /// try await presence.setValue("online")
    /// ```
    public func onDisconnectSetValue(_ value: Any?, withCompletionBlock block: (((any Error)?, DatabaseReference) -> Void)?) {
        self.submitOnDisconnect(block) { () throws(DatabaseError) in try WriteBuilder.set(self, value, function: "onDisconnectSetValue") }
    }

    /// ``onDisconnectSetValue(_:withCompletionBlock:)`` with a priority.
    public func onDisconnectSetValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: (((any Error)?, DatabaseReference) -> Void)?
    ) {
        self.submitOnDisconnect(block) { () throws(DatabaseError) in try WriteBuilder.set(self, value, priority: priority) }
    }

    /// Has the server apply the multi-path update `values` (as ``updateChildValues(_:)``) when this
    /// client disconnects.
    public func onDisconnectUpdateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: (((any Error)?, DatabaseReference) -> Void)?
    ) {
        self.submitOnDisconnect(block) { () throws(DatabaseError) in try WriteBuilder.update(self, values) }
    }

    /// Has the server remove this location when this client disconnects.
    public func onDisconnectRemoveValue(withCompletionBlock block: (((any Error)?, DatabaseReference) -> Void)?) {
        self.submitOnDisconnect(block) { () throws(DatabaseError) in try WriteBuilder.set(self, nil, function: "onDisconnectRemoveValue") }
    }

    /// Cancels every onDisconnect operation set at this location and below.
    public func cancelDisconnectOperations(withCompletionBlock block: (((any Error)?, DatabaseReference) -> Void)?) {
        self.submitOnDisconnect(block) { () throws(DatabaseError) in
            try WriteBuilder.checkWritable(self, function: "cancelDisconnectOperations")
            return nil
        }
    }

    /// ``onDisconnectSetValue(_:withCompletionBlock:)`` that returns once the server has the operation.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            self.onDisconnectSetValue(value) { error, ref in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: ref) }
            }
        }
    }

    /// ``onDisconnectRemoveValue(withCompletionBlock:)`` that returns once the server has the operation.
    @discardableResult
    public func onDisconnectRemoveValue() async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            self.onDisconnectRemoveValue { error, ref in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: ref) }
            }
        }
    }

    /// ``cancelDisconnectOperations(withCompletionBlock:)`` that returns once the server has cancelled them.
    @discardableResult
    public func cancelDisconnectOperations() async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            self.cancelDisconnectOperations { error, ref in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: ref) }
            }
        }
    }

    /// ``onDisconnectSetValue(_:andPriority:withCompletionBlock:)`` that returns once the server has
    /// the operation.
    @discardableResult
    public func onDisconnectSetValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            self.onDisconnectSetValue(value, andPriority: priority) { error, ref in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: ref) }
            }
        }
    }

    /// ``onDisconnectUpdateChildValues(_:withCompletionBlock:)`` that returns once the server has the
    /// operation.
    @discardableResult
    public func onDisconnectUpdateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { continuation in
            self.onDisconnectUpdateChildValues(values) { error, ref in
                if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: ref) }
            }
        }
    }

    /// Validates the operation here, then hands it to the server (`nil`: cancel). The outcome
    /// reaches `block` on the loop thread.
    private func submitOnDisconnect(
        _ block: (((any Error)?, DatabaseReference) -> Void)?, _ build: () throws(DatabaseError) -> WriteOperation?
    ) {
        let callback = LoopCallback(block)
        let ref = self
        let core = self.core
        let write: WriteOperation?
        do {
            write = try build()
        } catch {
            if !core.perform({ callback.value?(error, ref) }) { callback.value?(error, ref) }
            return
        }
        let path = self.path
        let accepted = core.perform {
            core.backend.onDisconnect(write, at: path) { error in callback.value?(error, ref) }
        }
        if !accepted { callback.value?(DatabaseCore.closedError, ref) }
    }
}
