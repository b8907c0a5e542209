import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to stdout and stderr, unbuffered, so that pipes see each line as it is printed.
enum Output {
    /// Prints `text` and a newline on stdout.
    static func line(_ text: String) {
        self.write(text + "\n", to: STDOUT_FILENO)
    }

    /// `canopy: <message>` on stderr, one line: control characters (a newline in a key, say)
    /// are shown as `\u000A` escapes.
    static func error(_ message: String) {
        self.write("canopy: " + self.escapingControlCharacters(message) + "\n", to: STDERR_FILENO)
    }

    static func escapingControlCharacters(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F {
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Text on stderr, as is (progress bars).
    static func status(_ text: String) {
        self.write(text, to: STDERR_FILENO)
    }

    static func write(_ text: String, to fd: Int32) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
        bytes.removeAll()
    }

    static var stdoutIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }
    static var stderrIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
    static var stdinIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }
}
