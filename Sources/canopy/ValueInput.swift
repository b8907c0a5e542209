import ArgumentParser
import Foundation

/// Where a write's JSON comes from: the argument, `--file`, or stdin (`-`).
struct ValueInput: ParsableArguments {
    @Argument(help: ArgumentHelp("The JSON value, or - to read it from stdin.", valueName: "json"))
    var json: String?

    @Option(name: .customLong("file"), help: ArgumentHelp("Read the JSON value from a file (- for stdin).", valueName: "FILE"))
    var file: String?

    func validate() throws {
        if self.json != nil && self.file != nil { throw ValidationError("Give the value either as an argument or with --file, not both.") }
        if self.json == nil && self.file == nil {
            // The argument parser takes `-5` for an option, not for the value.
            if let negative = CommandLine.arguments.dropFirst().first(where: {
                $0.count > 1 && $0.hasPrefix("-") && ($0.dropFirst().first?.isNumber ?? false || $0.dropFirst() == "Infinity")
            }) {
                throw ValidationError(
                    "Missing the JSON value: \(negative) was read as an option; give a negative number after -- at the end of the command, or on stdin with -."
                )
            }
            throw ValidationError("Missing the JSON value: give it as an argument, with --file FILE, or - for stdin.")
        }
    }

    /// The bytes of the value.
    func bytes() throws(CLIError) -> [UInt8] {
        if let file = self.file { return try readInput(file) }
        if self.json == "-" { return try readInput("-") }
        return Array((self.json ?? "").utf8)
    }
}

/// The contents of `file`, or of stdin for `-`.
func readInput(_ file: String) throws(CLIError) -> [UInt8] {
    if file == "-" {
        return Array(FileHandle.standardInput.readDataToEndOfFile())
    }
    guard let data = FileManager.default.contents(atPath: file) else {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) {
            throw .usage(isDirectory.boolValue ? "\(file) is a directory, not a JSON file." : "Cannot read \(file).")
        }
        throw .usage("No such file: \(file).")
    }
    return Array(data)
}
