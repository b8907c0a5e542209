import Foundation

/// The path of the executable `name` built with the tests: next to the test bundle, or up to two
/// directories above it (where SwiftPM puts products on Linux).
public func builtExecutable(_ name: String) -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [bundle, bundle.deletingLastPathComponent(), bundle.deletingLastPathComponent().deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name).path
}
