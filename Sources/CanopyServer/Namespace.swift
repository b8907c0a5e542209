import Canopy
import CanopyCore
import Foundation
import Synchronization

/// One namespace: its database, the streams that follow it, and its rules document.
final class Namespace: Sendable {
    let name: String
    let database: Database
    let hub: StreamHub
    /// The WebSocket listens.
    let wire: WireHub
    let rules: Mutex<JSONValue>
    let rulesFile: String?

    static let defaultRules: JSONValue = .object(["rules": .object([".read": .bool(true), ".write": .bool(true)])])

    private init(name: String, database: Database, rules: JSONValue, rulesFile: String?) {
        self.name = name
        self.database = database
        self.hub = StreamHub(database: database)
        self.wire = WireHub(database: database)
        self.rules = Mutex(rules)
        self.rulesFile = rulesFile
    }

    static func open(name: String, directory: String?, configuration: Database.Configuration) throws -> Namespace {
        guard let directory else {
            return Namespace(name: name, database: try Database.inMemory(configuration), rules: defaultRules, rulesFile: nil)
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let base = URL(fileURLWithPath: directory)
        let rulesFile = base.appendingPathComponent("\(name).rules.json").path
        var rules = defaultRules
        if let data = FileManager.default.contents(atPath: rulesFile), let parsed = try? Rules.parse(Array(data)) {
            rules = parsed
        }
        let database = try Database(path: base.appendingPathComponent(name).path, configuration)
        return Namespace(name: name, database: database, rules: rules, rulesFile: rulesFile)
    }
}
