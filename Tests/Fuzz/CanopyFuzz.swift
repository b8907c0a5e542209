import CanopyFuzzTargets

#if canImport(Glibc)
    import Glibc
#endif

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

// Built two ways:
// - plainly (`swift build`): a command that runs a target with Canopy's own seeded mutator,
//   writes the seed corpora and the libFuzzer dictionaries;
// - for libFuzzer (`-sanitize=fuzzer,address -DCANOPY_LIBFUZZER`): main hands over to libFuzzer's
//   driver, which calls `LLVMFuzzerTestOneInput`; CANOPY_FUZZ_TARGET names the target.
// See Tests/Fuzz/README.md.

#if CANOPY_LIBFUZZER

    let selected: FuzzTarget = {
        let name = getenv("CANOPY_FUZZ_TARGET").map { String(cString: $0) } ?? ""
        guard let target = FuzzTarget.named(name) else {
            printError("canopy-fuzz: set CANOPY_FUZZ_TARGET to one of \(FuzzTarget.all.map(\.name).joined(separator: ", "))")
            exit(64)
        }
        return target
    }()

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try selected.run(bytes)
        } catch {
            printError("canopy-fuzz: \(selected.name): \(error)")
            abort()
        }
        return 0
    }

    /// libFuzzer's entry point for a program with a main of its own (SwiftPM names the
    /// executable's main, so libFuzzer's cannot be used). Plain C types only, so the Swift calling
    /// convention matches.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    @main
    struct CanopyFuzz {
        static func main() {
            // Start what lives for the whole run (the in-process server, its thread pools) before
            // libFuzzer counts allocations per input.
            for seed in selected.seeds { try? selected.run(seed) }
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv) { data, size in fuzzOne(data, size) })
        }
    }

#else

    @main
    struct CanopyFuzz {
        static let usage = """
            usage: canopy-fuzz run TARGET [--iterations N] [--seed S] [CORPUS_DIR ...]
                   canopy-fuzz seeds DIR      write each target's seed corpus to DIR/TARGET/
                   canopy-fuzz dict TARGET    print the target's libFuzzer dictionary
            targets: \(FuzzTarget.all.map(\.name).joined(separator: ", "))
            """

        static func main() {
            var arguments = Array(CommandLine.arguments.dropFirst())
            guard let command = arguments.first else { fail(usage) }
            arguments.removeFirst()
            switch command {
            case "run": run(arguments)
            case "seeds": seeds(arguments)
            case "dict": dict(arguments)
            default: fail(usage)
            }
        }

        static func fail(_ message: String) -> Never {
            printError(message)
            exit(64)
        }

        static func target(_ name: String?) -> FuzzTarget {
            guard let name, let target = FuzzTarget.named(name) else { fail(usage) }
            return target
        }

        static func run(_ arguments: [String]) {
            var rest = arguments
            let target = target(rest.isEmpty ? nil : rest.removeFirst())
            var iterations = 100_000
            var seed: UInt64 = 1
            var corpus: [[UInt8]] = []
            while !rest.isEmpty {
                let argument = rest.removeFirst()
                switch argument {
                case "--iterations": iterations = rest.isEmpty ? -1 : Int(rest.removeFirst()) ?? -1
                case "--seed": seed = rest.isEmpty ? 0 : UInt64(rest.removeFirst()) ?? 0
                default: corpus += CorpusFiles.read(argument)
                }
                if iterations < 0 { fail("--iterations takes a non-negative number") }
            }
            if corpus.isEmpty { corpus = target.seeds }
            let outcome = target.run(corpus: corpus, iterations: iterations, seed: seed)
            if let (input, failure) = outcome.failure {
                let path = "crash-\(target.name)-\(seed)"
                CorpusFiles.write(input, to: path)
                fail("canopy-fuzz: \(target.name): \(failure) (input saved to \(path))")
            }
            print("canopy-fuzz: \(target.name): \(outcome.executed) inputs, no failure")
        }

        static func seeds(_ arguments: [String]) {
            guard arguments.count == 1 else { fail(usage) }
            for target in FuzzTarget.all {
                let directory = arguments[0] + "/" + target.name
                mkdir(directory, 0o755)
                for (i, seed) in target.seeds.enumerated() {
                    CorpusFiles.write(seed, to: directory + "/seed-\(i)")
                }
            }
        }

        static func dict(_ arguments: [String]) {
            let target = target(arguments.first)
            for token in target.dictionary {
                var line = "\""
                for b in token.utf8 {
                    if b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") || b < 0x20 || b >= 0x7F {
                        line += "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
                    } else {
                        line.unicodeScalars.append(Unicode.Scalar(b))
                    }
                }
                print(line + "\"")
            }
        }
    }

#endif
