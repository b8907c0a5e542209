/// A server that cannot start: a bad option combination, a port in use, a database that does
/// not open.
public struct ServerError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { self.message }
}
