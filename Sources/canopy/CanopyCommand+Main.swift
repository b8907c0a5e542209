import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

extension CanopyCommand {
    /// Runs the command; every error becomes one line on stderr, `canopy: <message>`, and an exit
    /// code: 64 for usage errors (bad arguments, paths, JSON, queries), 1 for runtime failures, 69
    /// when a server cannot be reached. `--help` and `--version` behave as usual.
    static func main() async {
        // A parent may have spawned us with SIGINT/SIGTERM blocked (posix_spawn keeps the mask):
        // observe and serve stop on them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        // `canopy sett users 1 --db x` would otherwise report "Unknown option '--db'".
        if let first = CommandLine.arguments.dropFirst().first, !first.hasPrefix("-"), first != "help",
            !Self.configuration.subcommands.contains(where: { $0._commandName == first })
        {
            let names = Self.configuration.subcommands.map { $0._commandName }.joined(separator: ", ")
            Self.finish(with: CLIError.usage("Unknown command '\(first)': use one of \(names) (canopy --help)."))
        }
        let command: any ParsableCommand
        do {
            command = try Self.parseAsRoot(Self.negativeNumbersAsValues(Array(CommandLine.arguments.dropFirst())))
        } catch {
            if Self.exitCode(for: error) != .success, let message = OptionSuggestions.message(for: Array(CommandLine.arguments.dropFirst()))
            {
                Self.finish(with: CLIError.usage(message))
            }
            Self.finish(with: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var command = command
                try command.run()
            }
        } catch {
            Self.finish(with: error)
        }
    }

    /// The argument parser reads `-5` as an option. A negative number right after an option
    /// (`--start-at -5`) becomes its value (`--start-at=-5`); one in the place of the JSON value
    /// of set, update or push (whose options all take a value) goes after a `--`.
    static func negativeNumbersAsValues(_ arguments: [String]) -> [String] {
        func isNegativeNumber(_ token: String) -> Bool {
            token.count > 1 && token.hasPrefix("-") && (token.dropFirst().first?.isNumber == true || token.dropFirst() == "Infinity")
        }
        guard !arguments.contains("--"), arguments.contains(where: isNegativeNumber) else { return arguments }
        var out: [String] = []
        var trailing: [String] = []
        var positionals = 0
        var optionValueNext = false
        // set, update and push: every option takes a value, so the positionals can be counted.
        let takesValue = ["set", "update", "push"].contains(arguments.first ?? "")
        for token in arguments {
            let afterOption = out.last.map { $0.hasPrefix("--") && !$0.contains("=") && $0 != "--help" && $0 != "--version" } ?? false
            if isNegativeNumber(token) && afterOption {
                out[out.count - 1] += "=" + token
                optionValueNext = false
            } else if isNegativeNumber(token) && takesValue && !optionValueNext && positionals == 2 && trailing.isEmpty {
                // After the subcommand and the path: the JSON value.
                trailing = ["--", token]
            } else if optionValueNext {
                optionValueNext = false
                out.append(token)
            } else if token.hasPrefix("-") && token != "-" {
                optionValueNext = takesValue && token.hasPrefix("--") && !token.contains("=") && token != "--help" && token != "--version"
                out.append(token)
            } else {
                positionals += 1
                out.append(token)
            }
        }
        return out + trailing
    }

    /// Reports `error` and exits.
    static func finish(with error: any Error) -> Never {
        if let error = error as? CLIError {
            Output.error(error.message)
            Glibc.exit(error.exit.rawValue)
        }
        if let code = error as? ExitCode {
            Glibc.exit(code.rawValue)
        }
        let code = Self.exitCode(for: error)
        if code == .success {
            // --help, --version: ArgumentParser prints them.
            Self.exit(withError: error)
        }
        // The first line of ArgumentParser's message, without its "Error: " prefix and usage.
        var message = Self.message(for: error).split(separator: "\n").first.map(String.init) ?? "invalid usage"
        if message.hasPrefix("Error: ") { message.removeFirst(7) }
        Output.error(message)
        Glibc.exit(code.rawValue == 0 ? 1 : code.rawValue)
    }
}
