/// A property a fuzz input broke: what was expected, and what happened.
public struct FuzzFailure: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { self.message }
}

/// One fuzz target: a function of arbitrary bytes that checks the properties its component
/// promises for any input, and throws ``FuzzFailure`` when one breaks. A crash, a hang or a
/// sanitizer report is a failure too.
public struct FuzzTarget: Sendable {
    /// The name used on the command line and for the corpus folder (`Tests/Fuzz/Corpus/NAME`).
    public let name: String
    /// Strings the mutator splices into inputs (libFuzzer gets them through `-dict=`).
    public let dictionary: [String]
    public let run: @Sendable ([UInt8]) throws(FuzzFailure) -> Void

    public init(name: String, dictionary: [String] = [], run: @escaping @Sendable ([UInt8]) throws(FuzzFailure) -> Void) {
        self.name = name
        self.dictionary = dictionary
        self.run = run
    }

    /// Every target, in the order CI runs them.
    public static let all: [FuzzTarget] = [.json, .path, .query, .journal, .rest, .rules]

    public static func named(_ name: String) -> FuzzTarget? { self.all.first { $0.name == name } }
}

/// Throws a ``FuzzFailure`` with `message` unless `condition` holds.
@inline(__always)
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFailure) {
    if !condition { throw FuzzFailure(message()) }
}

/// The bytes as text for messages: valid UTF-8 as is, anything else in hex.
func describe(_ bytes: [UInt8], limit: Int = 200) -> String {
    let shown = bytes.prefix(limit)
    if let text = String(validating: shown, as: UTF8.self) {
        return "\"\(text)\"" + (bytes.count > limit ? "… (\(bytes.count) bytes)" : "")
    }
    return shown.map { String($0, radix: 16) }.joined(separator: " ") + (bytes.count > limit ? " … (\(bytes.count) bytes)" : "")
}
