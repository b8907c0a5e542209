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

    /// `canopy: <message>` on stderr.
    static func error(_ message: String) {
        self.write("canopy: " + message + "\n", to: STDERR_FILENO)
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
