/// What a user most likely meant by an option that no command has: the REST API's query parameter
/// names (`--orderBy`, `--limitToLast`), and short forms (`--limit`, `--order-by`, `--first`).
/// The argument parser's own guess goes by spelling alone (`--limit` → `--min`).
enum OptionSuggestions {
    static let byOption: [String: String] = [
        "--limit": "--limit-to-first N or --limit-to-last N",
        "--limit-first": "--limit-to-first N", "--first": "--limit-to-first N", "--limitToFirst": "--limit-to-first N",
        "--limit-last": "--limit-to-last N", "--last": "--limit-to-last N", "--limitToLast": "--limit-to-last N",
        "--order-by": orderFlags, "--orderBy": orderFlags, "--order": orderFlags, "--sort": orderFlags, "--sort-by": orderFlags,
        "--startAt": "--start-at VALUE [KEY]", "--start": "--start-at VALUE [KEY] or --start-after VALUE [KEY]",
        "--startAfter": "--start-after VALUE [KEY]",
        "--endAt": "--end-at VALUE [KEY]", "--end": "--end-at VALUE [KEY] or --end-before VALUE [KEY]",
        "--endBefore": "--end-before VALUE [KEY]",
        "--equalTo": "--equal-to VALUE [KEY]", "--equal": "--equal-to VALUE [KEY]", "--equals": "--equal-to VALUE [KEY]",
    ]

    static let orderFlags = "--order-by-child PATH, --order-by-key, --order-by-value or --order-by-priority"

    /// The message for the first option in `arguments` (before a `--`) that has a suggestion.
    static func message(for arguments: [String]) -> String? {
        for argument in arguments {
            if argument == "--" { return nil }
            let option = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            if let suggestion = byOption[option] { return "Unknown option '\(option)': use \(suggestion)." }
        }
        return nil
    }
}
