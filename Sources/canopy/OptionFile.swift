import Foundation

/// The bytes of the file an option names (`--auth-token-file`, `--jwt-secret-file`,
/// `--cluster-password-file`, …), or a usage error naming the option, the path and why.
func readOptionFile(_ path: String, option: String) throws(CLIError) -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
        let reason = FileManager.default.fileExists(atPath: path) ? "cannot read" : "no such file"
        throw .usage("\(option) \(path): \(reason).")
    }
    return [UInt8](data)
}

/// ``readOptionFile(_:option:)`` for a secret (a token, a key): without one trailing line end
/// (`\n`, `\r\n` or `\r`), which an editor or `echo` leaves.
func readSecretOptionFile(_ path: String, option: String) throws(CLIError) -> [UInt8] {
    var bytes = try readOptionFile(path, option: option)
    if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    return bytes
}
