import CanopyCore

extension DatabaseReference {
    /// Replaces the data at this location (and its priority) with `value`; `nil`, `NSNull` or an
    /// empty dictionary removes it.
    ///
    /// Accepts `String`, numbers, `Bool`, `NSNumber`, `NSNull`, `[String: Any]`, arrays and
    /// ``JSONValue``, with `ServerValue` placeholders anywhere. The value is validated here and
    /// applied on the loop thread in the order this thread issued its writes; observers fire there.
    ///
    /// ```swift
    /// try ref.child("users").child(uid).setValue(["username": name])
    /// ```
    /// - Throws: ``DatabaseError`` naming the invalid key, value or path; nothing is written then.
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread.
    public func setValue(_ value: Any?) throws {
        self.core.write(try WriteBuilder.set(self, value), completion: nil)
    }

    /// ``setValue(_:)`` reporting the outcome to `block` (on the loop thread), including
    /// validation errors, instead of throwing.
    ///
    /// - Complexity: As ``setValue(_:)``: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth
    ///   *d*: O(*d* log *n*) to apply it and, on a database opened at a path, O(*s*) to journal it; plus
    ///   O(*k* log *n*) for each observed query or index it changes (*k* changed children) and O(*d*) per
    ///   child event delivered (its path is built). Validating the value, O(*s*), runs on the calling thread.
    public func setValue(_ value: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.set(self, value) }
    }

    /// ``setValue(_:)`` that returns once the write is applied (on a database opened at a path, once it is
    /// durable under its ``SyncPolicy``).
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread. The wait for durability
    ///   costs the loop nothing.
    @discardableResult
    public func setValue(_ value: Any?) async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.set(self, value))
    }

    /// Replaces the data and sets its priority (a string, a finite number, `nil` or a server value).
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread.
    public func setValue(_ value: Any?, andPriority priority: Any?) throws {
        self.core.write(try WriteBuilder.set(self, value, priority: priority), completion: nil)
    }

    /// ``setValue(_:andPriority:)`` reporting the outcome to `block` on the loop thread.
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread.
    public func setValue(
        _ value: Any?, andPriority priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void
    ) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.set(self, value, priority: priority) }
    }

    /// ``setValue(_:andPriority:)`` that returns once the write is applied (on a database opened at a path, once it is
    /// durable under its ``SyncPolicy``).
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread. The wait for durability
    ///   costs the loop nothing.
    @discardableResult
    public func setValue(_ value: Any?, andPriority priority: Any?) async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.set(self, value, priority: priority))
    }

    /// Sets only the priority of the data here. On a location without data it changes nothing and
    /// the completion receives a `.writeFailed` error.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    public func setPriority(_ priority: Any?) throws {
        self.core.write(try WriteBuilder.setPriority(self, priority), completion: nil)
    }

    /// ``setPriority(_:)`` reporting the outcome to `block` on the loop thread.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    public func setPriority(_ priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.setPriority(self, priority) }
    }

    /// ``setPriority(_:)`` that returns once the write is applied (on a database opened at a path, once it is
    /// durable under its ``SyncPolicy``).
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   The wait for durability costs the loop nothing.
    @discardableResult
    public func setPriority(_ priority: Any?) async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.setPriority(self, priority))
    }

    /// Removes the data at this location and below. Removing missing data succeeds.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   Freeing the removed nodes that no snapshot shares is proportional to their number.
    public func removeValue() throws {
        self.core.write(try WriteBuilder.set(self, nil, function: "remove"), completion: nil)
    }

    /// ``removeValue()`` reporting the outcome to `block` on the loop thread.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   Freeing the removed nodes that no snapshot shares is proportional to their number.
    public func removeValue(completionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.set(self, nil, function: "remove") }
    }

    /// ``removeValue()`` that returns once the write is applied (on a database opened at a path, once it is
    /// durable under its ``SyncPolicy``).
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   Freeing the removed nodes that no snapshot shares is proportional to their number. The wait for
    ///   durability costs the loop nothing.
    @discardableResult
    public func removeValue() async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.set(self, nil, function: "remove"))
    }

    /// Writes several locations below this one at once: each key is a relative path (`"a/b/c"`)
    /// whose value replaces that location (`nil`/`NSNull` removes it). All-or-nothing: either
    /// every entry is valid and observers see the result of all of them together, or nothing is
    /// written. A path may not be an ancestor of another.
    ///
    /// ```swift
    /// try ref.updateChildValues(["/posts/\(key)": post, "/user-posts/\(uid)/\(key)": post])
    /// ```
    ///
    /// - Complexity: O(*s* + *e* · *d* log *n*) on the loop for *e* entries of *s* nodes in all at depth *d*
    ///   (64 or more sibling entries are merged at once, in O(*n* + *e* log *e*)), O(*s*) of it to journal
    ///   them on a database opened at a path; plus O(*k* log *n*) for each observed query or index it changes
    ///   (*k* changed children) and O(*d*) per child event delivered (its path is built). Validation,
    ///   O(*s* + *e* · *d*), runs on the calling thread.
    public func updateChildValues(_ values: [AnyHashable: Any]) throws {
        self.core.write(try WriteBuilder.update(self, values), completion: nil)
    }

    /// ``updateChildValues(_:)`` reporting the outcome to `block` on the loop thread.
    ///
    /// - Complexity: O(*s* + *e* · *d* log *n*) on the loop for *e* entries of *s* nodes in all at depth *d*
    ///   (64 or more sibling entries are merged at once, in O(*n* + *e* log *e*)), O(*s*) of it to journal
    ///   them on a database opened at a path; plus O(*k* log *n*) for each observed query or index it changes
    ///   (*k* changed children) and O(*d*) per child event delivered (its path is built). Validation,
    ///   O(*s* + *e* · *d*), runs on the calling thread.
    public func updateChildValues(
        _ values: [AnyHashable: Any], withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void
    ) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.update(self, values) }
    }

    /// ``updateChildValues(_:)`` that returns once the write is applied (on a database opened at a path, once it is
    /// durable under its ``SyncPolicy``).
    ///
    /// - Complexity: O(*s* + *e* · *d* log *n*) on the loop for *e* entries of *s* nodes in all at depth *d*
    ///   (64 or more sibling entries are merged at once, in O(*n* + *e* log *e*)), O(*s*) of it to journal
    ///   them on a database opened at a path; plus O(*k* log *n*) for each observed query or index it changes
    ///   (*k* changed children) and O(*d*) per child event delivered (its path is built). Validation,
    ///   O(*s* + *e* · *d*), runs on the calling thread. The wait for durability costs the loop nothing.
    @discardableResult
    public func updateChildValues(_ values: [AnyHashable: Any]) async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.update(self, values))
    }

    // MARK: - Plumbing

    private func submit(_ block: @escaping ((any Error)?, DatabaseReference) -> Void, _ build: () throws(DatabaseError) -> WriteOperation) {
        let callback = LoopCallback(block)
        let ref = self
        let write: WriteOperation
        do {
            write = try build()
        } catch {
            // Report on the loop thread like every other outcome (or here if the loop is gone).
            if !self.core.perform({ callback.value(error, ref) }) { callback.value(error, ref) }
            return
        }
        self.core.write(write) { error in callback.value(error, ref) }
    }

    private func submit(_ write: WriteOperation) async throws -> DatabaseReference {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.core.write(write) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
        return self
    }
}
