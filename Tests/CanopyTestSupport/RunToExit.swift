import Foundation

/// What a child process run to its exit printed.
public struct FinishedRun: Sendable {
    public var status: Int32
    public var stdout: String
    /// Empty when the run merged its standard error into `stdout`.
    public var stderr: String
}

/// Runs `executable` with `arguments` to its exit, under a ``ProcessWatchdog`` waiting for `what`:
/// `input` is written to its standard input, which is then closed; `environment` `nil` passes
/// this process's. With `mergeStandardError` the child's standard error goes to the `stdout`
/// pipe, interleaved as written.
public func runToExit(
    _ executable: String, _ arguments: [String], waitingFor what: String, input: String? = nil, environment: [String: String]? = nil,
    directory: String? = nil, mergeStandardError: Bool = false
) throws -> FinishedRun {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = mergeStandardError ? stdout : Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let watchdog = ProcessWatchdog(process, what)
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    // Read both pipes fully before waiting (large outputs would block the child otherwise).
    let errors = Locked(Data())
    let errorReader = mergeStandardError ? nil : Thread { errors.withLock { $0 = stderr.fileHandleForReading.readDataToEndOfFile() } }
    errorReader?.start()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try watchdog.check()
    if let errorReader {
        let name = URL(fileURLWithPath: executable).lastPathComponent
        try waitUntil("\(name)'s stderr to be read") { !errorReader.isExecuting && errorReader.isFinished }
    }
    return FinishedRun(
        status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
        stderr: String(decoding: errors.withLock { $0 }, as: UTF8.self))
}
