import ArgumentParser
import Canopy
import CanopyCore

/// Formats events as lines.
struct EventPrinter: Sendable {
    var format: Observe.Format
    var colour: Bool

    func print(_ type: DataEventType, _ snapshot: DataSnapshot, previous: String?) {
        let name = Observe.eventNames.first { $0.1 == type }?.0 ?? "\(type)"
        let hasPrevious = type == .childAdded || type == .childChanged || type == .childMoved
        let key = snapshot.key.map { JSONWriter.string(.string($0)) } ?? "null"
        switch self.format {
        case .json:
            var line = "{\"event\":\"\(name)\",\"key\":\(key)"
            if hasPrevious { line += ",\"previous\":" + (previous.map { JSONWriter.string(.string($0)) } ?? "null") }
            Output.line(line + ",\"value\":" + snapshot.jsonString() + "}")
        case .text:
            let colourCode: String
            switch type {
            case .childAdded: colourCode = "32"
            case .childChanged: colourCode = "33"
            case .childRemoved: colourCode = "31"
            case .childMoved: colourCode = "36"
            default: colourCode = "1"
            }
            let label = name.padding(to: 13)
            var line = self.colour ? "\u{1B}[\(colourCode)m\(label)\u{1B}[0m " : label + " "
            line += snapshot.key ?? "/"
            if hasPrevious {
                let after = previous.map { "after \($0)" } ?? "first"
                line += self.colour ? " \u{1B}[2m(\(after))\u{1B}[0m" : " (\(after))"
            }
            line += "  " + snapshot.jsonString()
            Output.line(line)
        }
    }
}
