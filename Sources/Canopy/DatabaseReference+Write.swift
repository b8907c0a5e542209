import CanopyCore

// Each write has three forms, under Firebase's names where Firebase has them:
// - `try await ref.setValue(x)` returns once the write is applied (durable, on a database opened
//   at a path): the form to use wherever `await` can be written.
// - `ref.setValue(x) { error, ref in … }` reports the outcome to a block on the loop thread.
// - `try ref.queueSetValue(x)` validates, queues the write for the loop in this thread's order and
//   returns at once, for synchronous code (observer callbacks, drain-mode tests).
// The queueing form has a name of its own because Swift's overload ranking treats top-level code
// as synchronous: with a synchronous `setValue(_:)` beside the async one, `try await
// ref.setValue(x)` in a `main.swift` would pick the synchronous one and return before the write.

extension DatabaseReference {
    /// Validates `value`, queues the write for the loop (in the order this thread issued its writes)
    /// and returns at once, before it is applied: ``setValue(_:)`` for synchronous code. Observers
    /// fire on the loop thread once it is applied. A write refused after validation (a storage
    /// failure, a server's rules) is undone with events but reported to no caller, so prefer
    /// ``setValue(_:)`` or ``setValue(_:withCompletionBlock:)`` where the outcome matters.
    ///
    /// ```swift
    /// try ref.child("users").child(uid).queueSetValue(["username": name])
    /// ```
    /// - Throws: `DatabaseError` naming the invalid key, value or path; nothing is written then.
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread.
    public func queueSetValue(_ value: Any?) throws {
        self.core.write(try WriteBuilder.set(self, value), completion: nil)
    }

    /// ``setValue(_:)`` reporting the outcome to `block` (on the loop thread), including
    /// validation errors, instead of throwing or waiting.
    ///
    /// - Complexity: As ``setValue(_:)``: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth
    ///   *d*: O(*d* log *n*) to apply it and, on a database opened at a path, O(*s*) to journal it; plus
    ///   O(*k* log *n*) for each observed query or index it changes (*k* changed children) and O(*d*) per
    ///   child event delivered (its path is built). Validating the value, O(*s*), runs on the calling thread.
    public func setValue(_ value: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.set(self, value) }
    }

    /// Replaces the data at this location (and its priority) with `value` and returns once the write
    /// is applied (on a database opened at a path, once it is durable under its ``SyncPolicy``; on a
    /// database connected to a server, once the server has it). `nil`, `NSNull` or an empty
    /// dictionary removes the data.
    ///
    /// Accepts `String`, numbers, `Bool`, `NSNumber`, `NSNull`, `[String: Any]`, arrays and
    /// `JSONValue`, with `ServerValue` placeholders anywhere. The value is validated here and
    /// applied on the loop thread in the order this thread issued its writes; observers fire there.
    ///
    /// ```swift
    /// try await ref.child("users").child(uid).setValue(["username": name])
    /// ```
    /// - Throws: `DatabaseError` naming the invalid key, value or path (nothing is written then), or
    ///   the error that refused the write.
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

    /// ``setValue(_:andPriority:)`` that queues the write and returns at once, as ``queueSetValue(_:)``.
    ///
    /// - Complexity: O(*s* + *d* log *n*) on the loop for a value of *s* nodes at depth *d*: O(*d* log *n*)
    ///   to apply it and, on a database opened at a path, O(*s*) to journal it; plus O(*k* log *n*) for each
    ///   observed query or index it changes (*k* changed children) and O(*d*) per child event delivered (its
    ///   path is built). Validating the value, O(*s*), runs on the calling thread.
    public func queueSetValue(_ value: Any?, andPriority priority: Any?) throws {
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

    /// Replaces the data and sets its priority (a string, a finite number, `nil` or a server value);
    /// returns once the write is applied (on a database opened at a path, once it is durable under
    /// its ``SyncPolicy``).
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

    /// ``setPriority(_:)`` that queues the write and returns at once, as ``queueSetValue(_:)``.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    public func queueSetPriority(_ priority: Any?) throws {
        self.core.write(try WriteBuilder.setPriority(self, priority), completion: nil)
    }

    /// ``setPriority(_:)`` reporting the outcome to `block` on the loop thread.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    public func setPriority(_ priority: Any?, withCompletionBlock block: @escaping ((any Error)?, DatabaseReference) -> Void) {
        self.submit(block) { () throws(DatabaseError) in try WriteBuilder.setPriority(self, priority) }
    }

    /// Sets only the priority of the data here and returns once the write is applied (on a database
    /// opened at a path, once it is durable under its ``SyncPolicy``). On a location without data it
    /// changes nothing and throws a `.writeFailed` error.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   The wait for durability costs the loop nothing.
    @discardableResult
    public func setPriority(_ priority: Any?) async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.setPriority(self, priority))
    }

    /// ``removeValue()`` that queues the removal and returns at once, as ``queueSetValue(_:)``.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   Freeing the removed nodes that no snapshot shares is proportional to their number.
    public func queueRemoveValue() throws {
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

    /// Removes the data at this location and below, and returns once the removal is applied (on a
    /// database opened at a path, once it is durable under its ``SyncPolicy``). Removing missing data
    /// succeeds.
    ///
    /// - Complexity: O(*d* log *n*) on the loop at depth *d*, plus O(*k* log *n*) for each observed query or
    ///   index it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    ///   Freeing the removed nodes that no snapshot shares is proportional to their number. The wait for
    ///   durability costs the loop nothing.
    @discardableResult
    public func removeValue() async throws -> DatabaseReference {
        try await self.submit(try WriteBuilder.set(self, nil, function: "remove"))
    }

    /// ``updateChildValues(_:)`` that queues the update and returns at once, as ``queueSetValue(_:)``.
    ///
    /// - Complexity: O(*s* + *e* · *d* log *n*) on the loop for *e* entries of *s* nodes in all at depth *d*
    ///   (64 or more sibling entries are merged at once, in O(*n* + *e* log *e*)), O(*s*) of it to journal
    ///   them on a database opened at a path; plus O(*k* log *n*) for each observed query or index it changes
    ///   (*k* changed children) and O(*d*) per child event delivered (its path is built). Validation,
    ///   O(*s* + *e* · *d*), runs on the calling thread.
    public func queueUpdateChildValues(_ values: [AnyHashable: Any]) throws {
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

    /// Writes several locations below this one at once, and returns once the write is applied (on a
    /// database opened at a path, once it is durable under its ``SyncPolicy``): each key is a relative
    /// path (`"a/b/c"`) whose value replaces that location (`nil`/`NSNull` removes it). All-or-nothing:
    /// either every entry is valid and observers see the result of all of them together, or nothing
    /// is written. A path may not be an ancestor of another.
    ///
    /// ```swift
    /// try await ref.updateChildValues(["/posts/\(key)": post, "/user-posts/\(uid)/\(key)": post])
    /// ```
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
