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
            command = try Self.parseAsRoot()
        } catch {
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
