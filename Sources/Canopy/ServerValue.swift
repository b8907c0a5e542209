public import class Foundation.NSNumber

/// Placeholders the database replaces with values when it applies a write (Firebase's
/// `ServerValue`), usable anywhere in a written value, as a priority, or in a transaction result.
///
/// ```swift
/// try await ref.child("lastSeen").setValue(ServerValue.timestamp())
/// try await ref.child("likes").setValue(ServerValue.increment(1))
/// ```
public enum ServerValue {
    /// The time the write is applied, in milliseconds since 1970 (`{".sv": "timestamp"}`).
    public static func timestamp() -> [AnyHashable: Any] { [".sv": "timestamp"] }

    /// Adds `delta` to the number stored at the location when the write is applied, or stores
    /// `delta` when there is no number there (`{".sv": {"increment": delta}}`). Integers add as
    /// `Int64` while the sum fits, else as `Double`.
    public static func increment(_ delta: NSNumber) -> [AnyHashable: Any] { [".sv": ["increment": delta]] }

    /// The `JSONValue` form of ``timestamp()``.
    public static var timestampValue: JSONValue { [".sv": "timestamp"] }

    /// The `JSONValue` form of ``increment(_:)``.
    public static func incrementValue(_ delta: Int64) -> JSONValue { [".sv": ["increment": .int(delta)]] }

    /// The `JSONValue` form of ``increment(_:)`` with a floating-point delta.
    public static func incrementValue(_ delta: Double) -> JSONValue { [".sv": ["increment": .double(delta)]] }
}
