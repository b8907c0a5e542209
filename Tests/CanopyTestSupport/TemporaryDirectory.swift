import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()`` or when the
/// object goes away.
public final class TemporaryDirectory: Sendable {
    public let path: String

    /// Creates `<tmp>/<name>-<UUID>`.
    public init(_ name: String = "canopy") {
        self.path = FileManager.default.temporaryDirectory.path + "/\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    public func file(_ name: String) -> String { self.path + "/" + name }

    /// The names of the files in the directory, sorted.
    public var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: self.path)) ?? []).sorted() }

    public func remove() { try? FileManager.default.removeItem(atPath: self.path) }

    deinit { self.remove() }
}
