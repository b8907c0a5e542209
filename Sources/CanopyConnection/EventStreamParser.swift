/// Splits a `text/event-stream` body into events (name and data), LF or CRLF line endings.
package struct EventStreamParser {
    private var buffer: [UInt8] = []
    private var name = ""
    private var data: [UInt8] = []
    private var hasData = false

    package init() {}

    package mutating func feed(_ bytes: some Sequence<UInt8>) -> [(String, [UInt8])] {
        self.buffer += bytes
        var events: [(String, [UInt8])] = []
        var start = 0
        while let newline = self.buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
            var line = self.buffer[start..<newline]
            start = newline + 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty {
                if self.hasData || !self.name.isEmpty { events.append((self.name.isEmpty ? "message" : self.name, self.data)) }
                self.name = ""
                self.data = []
                self.hasData = false
                continue
            }
            let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
            let field = String(decoding: line[..<colon], as: UTF8.self)
            var value = colon < line.endIndex ? line[(colon + 1)...] : []
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
            switch field {
            case "event": self.name = String(decoding: value, as: UTF8.self)
            case "data":
                if self.hasData { self.data.append(UInt8(ascii: "\n")) }
                self.data += value
                self.hasData = true
            default: break
            }
        }
        self.buffer.removeFirst(start)
        return events
    }
}
