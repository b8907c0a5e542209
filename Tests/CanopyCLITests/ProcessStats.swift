import Foundation

/// Memory and descriptors of a process, from /proc.
enum ProcessStats {
    /// Resident set size in bytes (VmRSS).
    static func residentBytes(_ pid: Int32) -> Int { self.statusBytes(pid, "VmRSS") }

    /// The peak resident set size in bytes (VmHWM), since the process started or since
    /// `5` was written to its `clear_refs`.
    static func peakResidentBytes(_ pid: Int32) -> Int { self.statusBytes(pid, "VmHWM") }

    /// A size from /proc/PID/status (`field: N kB`) in bytes; 0 if it cannot be read.
    private static func statusBytes(_ pid: Int32, _ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// Open file descriptors.
    static func openFiles(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// User and system CPU time in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else {
            return 0
        }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
}
