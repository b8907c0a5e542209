import CanopyCore
public import Foundation

extension DataSnapshot {
    /// Decodes the data here as `T` (through its JSON form, as Firebase's `data(as:)` does).
    ///
    /// ```swift
    /// struct Post: Codable { var title: String; var starCount: Int }
    /// let post = try snapshot.data(as: Post.self)
    /// ```
    /// - Throws: `DecodingError` when the data does not fit `T` (including when there is none).
    ///
    /// - Complexity: O(*s*) for *s* nodes, to write the JSON and decode it.
    public func data<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: Data(NodeWriter.bytes(self.node, export: false, pretty: false)))
    }
}

extension DatabaseReference {
    /// ``setValue(from:encoder:)`` that queues the write and returns at once, as
    /// ``queueSetValue(_:)``.
    ///
    /// - Throws: the encoder's error, or a `DatabaseError` when the encoded value is not valid
    ///   data (for example a dictionary key with a `.`); nothing is written then.
    ///
    /// - Complexity: O(*b*) to encode and parse *b* bytes of JSON on the calling thread; then on the loop as
    ///   ``setValue(_:)``: O(*s* + *d* log *n*) for *s* nodes at depth *d*, plus the events.
    public func queueSetValue<T: Encodable>(from value: T, encoder: JSONEncoder = JSONEncoder()) throws {
        try self.queueImportJSON(Array(try encoder.encode(value)))
    }

    /// Replaces the data here with `value` encoded as JSON (Firebase's `setValue(from:)`) and returns
    /// once the write is applied (on a database opened at a path, once it is durable under its
    /// ``SyncPolicy``).
    ///
    /// - Throws: the encoder's error, or a `DatabaseError` when the encoded value is not valid
    ///   data (for example a dictionary key with a `.`); nothing is written then.
    ///
    /// - Complexity: O(*b*) to encode and parse *b* bytes of JSON on the calling thread; then on the loop as
    ///   ``setValue(_:)``: O(*s* + *d* log *n*) for *s* nodes at depth *d*, plus the events. The wait for
    ///   durability costs the loop nothing.
    @discardableResult
    public func setValue<T: Encodable>(from value: T, encoder: JSONEncoder = JSONEncoder()) async throws -> DatabaseReference {
        try await self.importJSON(Array(try encoder.encode(value)))
    }
}
