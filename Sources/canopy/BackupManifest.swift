import CanopyCore
import Foundation

/// `manifest.json` of a backup directory: which Canopy wrote it, when, from which server, and the
/// namespaces it holds (each as `NAME.json`, data in export format, and `NAME.rules.json`).
struct BackupManifest {
    static let fileName = "manifest.json"

    var version: String
    var created: String
    var server: String
    var namespaces: [String]

    var json: JSONValue {
        .object([
            "canopy": .string(self.version), "created": .string(self.created), "server": .string(self.server),
            "namespaces": .array(self.namespaces.map { .string($0) }),
        ])
    }

    /// Reads `DIR/manifest.json`; a usage error naming what is wrong.
    init(directory: String) throws(CLIError) {
        let path = directory + "/" + Self.fileName
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .usage("\(directory) is not a backup: it has no \(Self.fileName) (canopy backup writes one).")
        }
        guard case .object(let members) = try parseJSON(Array(data)), case .array(let names)? = members["namespaces"] else {
            throw .usage("\(path) is not a backup manifest: it has no \"namespaces\" list.")
        }
        var namespaces: [String] = []
        for name in names {
            guard case .string(let name) = name, !name.isEmpty, name.utf8.allSatisfy(ConnectionOptions.isNamespaceByte) else {
                throw .usage("\(path) names an invalid namespace: \(name).")
            }
            namespaces.append(name)
        }
        if case .string(let version)? = members["canopy"] { self.version = version } else { self.version = "unknown" }
        if case .string(let created)? = members["created"] { self.created = created } else { self.created = "" }
        if case .string(let server)? = members["server"] { self.server = server } else { self.server = "" }
        self.namespaces = namespaces
    }

    init(version: String, created: String, server: String, namespaces: [String]) {
        self.version = version
        self.created = created
        self.server = server
        self.namespaces = namespaces
    }
}
