import CanopyTestSupport
import Foundation

/// `canopy serve` processes of this build (the `canopy` executable beside `canopy-bench`, so
/// `swift build -c release` builds both), for the scenarios that compare server set-ups
/// (B18.steady) or kill servers (B18.failover).
extension ServeProcess: ServerProcess {
    /// Starts `canopy serve --host HOST --port PORT ARGUMENTS…` of this build, its standard
    /// error in `logPath`.
    static func bench(host: String = "127.0.0.1", port: Int, arguments: [String], logPath: String) throws -> ServeProcess {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let canopy = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("canopy").path
        return try ServeProcess(executable: canopy, host: host, port: port, arguments: arguments, logPath: logPath)
    }
}
