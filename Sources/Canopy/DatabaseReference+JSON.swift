import CanopyCore

extension DatabaseReference {
    /// ``importJSON(_:)-([UInt8])`` that queues the write and returns at once, as
    /// ``queueSetValue(_:)``.
    ///
    /// - Complexity: O(*b*) on the calling thread to parse *b* bytes; then on the loop, as ``setValue(_:)``,
    ///   O(*s* + *d* log *n*) for the *s* nodes parsed, plus O(*k* log *n*) for each observed query or index
    ///   it changes (*k* changed children) and O(*d*) per child event delivered (its path is built).
    public func queueImportJSON(_ bytes: [UInt8]) throws {
        self.core.write(try self.importOperation(bytes), completion: nil)
    }

    /// Replaces the data here with a JSON document (export format accepted: `.priority` and
    /// `.value` keys, server values) and returns once it is applied (on a database opened at a path,
    /// once it is durable under its ``SyncPolicy``). Parses large documents quickly (about 100 MB/s)
    /// straight into the tree.
    ///
    /// ```swift
    /// try await db.reference().importJSON(Array(try Data(contentsOf: url)))
    /// ```
    /// - Throws: `DatabaseError` `.invalidJSON` with the line and column of a syntax error, or
    ///   the validation error `setValue` would give; nothing is written then.
    ///
    /// - Complexity: O(*b*) on the calling thread to parse *b* bytes; then on the loop, as ``setValue(_:)``,
    ///   O(*s* + *d* log *n*) for the *s* nodes parsed, plus O(*k* log *n*) for each observed query or index
    ///   it changes (*k* changed children) and O(*d*) per child event delivered (its path is built). The wait
    ///   for durability costs the loop nothing.
    @discardableResult
    public func importJSON(_ bytes: [UInt8]) async throws -> DatabaseReference {
        let write = try self.importOperation(bytes)
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            self.core.write(write) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
        }
        return self
    }

    /// ``importJSON(_:)-([UInt8])`` from a string.
    ///
    /// - Complexity: As ``importJSON(_:)-([UInt8])``, plus O(*b*) to copy the text's *b* bytes.
    @discardableResult
    public func importJSON(_ text: String) async throws -> DatabaseReference {
        try await self.importJSON(Array(text.utf8))
    }

    /// ``queueImportJSON(_:)-([UInt8])`` from a string.
    ///
    /// - Complexity: As ``importJSON(_:)-([UInt8])``, plus O(*b*) to copy the text's *b* bytes.
    public func queueImportJSON(_ text: String) throws {
        try self.queueImportJSON(Array(text.utf8))
    }

    /// The data here as JSON text, keys in key order. With `exportFormat`, priorities are kept
    /// (and no arrays are produced), so ``importJSON(_:)-([UInt8])`` restores the same tree.
    ///
    /// - Complexity: As ``DatabaseQuery/getData()`` on the loop; then O(*s*) off the loop to write the *s*
    ///   nodes.
    public func exportJSON(pretty: Bool = false, exportFormat: Bool = true) async throws -> String {
        try await self.getData().jsonString(pretty: pretty, exportFormat: exportFormat)
    }

    private func importOperation(_ bytes: [UInt8]) throws(DatabaseError) -> WriteOperation {
        try WriteBuilder.checkWritable(self, function: "import")
        let location = self.path.keys
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(DatabaseError) -> WriteValue in
                try NodeImporter.writeValue(fromJSON: buffer, location: location, function: "import")
            }
        }
        return .set(self.path, try result.get())
    }
}

extension DataSnapshot {
    /// The snapshot's data as JSON text, keys in key order (`null` when there is none).
    /// - Parameters:
    ///   - pretty: Indent the text, one member per line.
    ///   - exportFormat: Include priorities, as ``valueInExportFormat()`` does.
    ///
    /// - Complexity: O(*s*) for *s* nodes (keys are already in key order).
    public func jsonString(pretty: Bool = false, exportFormat: Bool = false) -> String {
        NodeWriter.string(self.node, export: exportFormat, pretty: pretty)
    }
}
