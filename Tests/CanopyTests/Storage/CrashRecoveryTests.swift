import CanopyCore
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

/// A child process writes with `.always` and reports each acknowledged write; it is SIGKILLed at
/// a random moment; after reopening, every acknowledged write must be there and the tree must be
/// the state after some prefix of the issued writes.
@Suite("Crash recovery: SIGKILL during writes and checkpoints")
struct CrashRecoveryTests {
    /// The crash writer built beside this test bundle.
    static var writerPath: String { builtExecutable("canopy-crash-writer") }

    /// Applies `operation` to an in-memory oracle database.
    static func apply(_ operation: CrashWorkload.Operation, to db: Database) throws {
        switch operation {
        case .set(let path, let value): try db.reference(withPath: path).queueSetValue(value)
        case .update(let path, let values):
            try db.reference(withPath: path).queueUpdateChildValues(
                values.mapValues { value -> Any in value.map { $0 as Any } ?? NSNull() })
        case .remove(let path): try db.reference(withPath: path).queueRemoveValue()
        case .increment(let path): try db.reference(withPath: path).queueSetValue(ServerValue.increment(1))
        case .setWithPriority(let path, let value, let priority):
            try db.reference(withPath: path).queueSetValue(value, andPriority: priority)
        }
    }

    /// Runs the writer until it has acknowledged `killAfter` writes (or finished), then kills it;
    /// returns the highest acknowledged index (-1 for none) and whether it finished.
    static func runWriter(directory: String, seed: UInt64, count: Int, killAfter: Int) throws -> (lastAck: Int, finished: Bool) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: writerPath)
        process.arguments = [directory, String(seed), String(count)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let watchdog = ProcessWatchdog(process, "the crash writer to be killed or finish")
        var lastAck = -1
        var acks = 0
        var finished = false
        var buffer = Data()
        let handle = output.fileHandleForReading
        reading: while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                if line.hasPrefix("ack ") {
                    let index = Int(line.dropFirst(4))!
                    #expect(index == lastAck + 1, "acknowledgements arrive in order")
                    lastAck = index
                    acks += 1
                    if acks >= killAfter {
                        kill(process.processIdentifier, SIGKILL)
                        break reading
                    }
                } else if line == "done" {
                    finished = true
                } else if line != "open" {
                    Issue.record("crash writer said: \(line)")
                }
            }
        }
        process.waitUntilExit()
        try watchdog.check()
        // Acknowledgements printed before the kill landed still count.
        buffer.append(handle.readDataToEndOfFile())
        for line in String(decoding: buffer, as: UTF8.self).split(separator: "\n") where line.hasPrefix("ack ") {
            lastAck = max(lastAck, Int(line.dropFirst(4))!)
        }
        return (lastAck, finished)
    }

    @Test("50 rounds of SIGKILL: every acknowledged write survives and the tree is a prefix state")
    func killedWriter() throws {
        let dir = TemporaryDirectory("canopy-crash")
        defer { dir.remove() }
        var random = SeededGenerator(seed: 0xC0FFEE)
        let count = 300
        let rounds = Int(ProcessInfo.processInfo.environment["CANOPY_CRASH_ROUNDS"] ?? "") ?? 50
        var stateText: String?
        var checkpointsSeen = 0
        for round in 0..<rounds {
            let seed = UInt64(round) &+ 1
            let killAfter = Int.random(in: 0...count, using: &random)
            let (lastAck, _) = try Self.runWriter(directory: dir.path, seed: seed, count: count, killAfter: killAfter)
            if !dir.checkpoints.isEmpty { checkpointsSeen += 1 }

            let reopened = try Database(path: dir.path, .manual())
            let actual = try exportedTree(reopened)
            let actualText = try exportedText(reopened)
            reopened.close()

            // The oracle: the state before the round, then each prefix of the round's writes.
            let oracle = try Database.inMemory(.manual())
            defer { oracle.close() }
            if let stateText { try oracle.reference().queueImportJSON(stateText) }
            oracle.drain()
            let operations = CrashWorkload.operations(seed: seed, count: count)
            var prefixes: [JSONValue] = [try exportedTree(oracle)]
            for operation in operations {
                try Self.apply(operation, to: oracle)
                prefixes.append(try exportedTree(oracle))
            }
            // prefixes[p] is the state after p writes; acknowledged writes 0...lastAck need p > lastAck.
            let matching = prefixes.indices.filter { prefixes[$0] == actual }
            #expect(
                matching.contains { $0 > lastAck },
                "round \(round): the reopened tree is not the state after \(lastAck + 1) or more writes (matches prefixes \(matching))")
            if matching.isEmpty { return }
            stateText = actualText
        }
        #expect(checkpointsSeen > 0, "checkpoints were written during the rounds")
    }
}
