import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A server the benchmark runs in a child process: its port on 127.0.0.1 and what `/proc` says
/// about it.
protocol ServerProcess {
    var port: Int { get }
    var pid: Int32 { get }
}

extension ServerProcess {
    /// The child's resident set size in bytes.
    var rssBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(self.pid)/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count >= 2, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The child's peak resident set size in bytes (`VmHWM`).
    var peakRSSBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/\(self.pid)/status", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) })
        else { return -1 }
        return kilobytes * 1024
    }

    /// The CPU time (user and system, all threads) the child has used so far, in seconds.
    var cpuSeconds: Double {
        // /proc/PID/stat: "PID (COMM) STATE …", utime and stime are fields 14 and 15.
        guard let text = try? String(contentsOfFile: "/proc/\(self.pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return -1 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
