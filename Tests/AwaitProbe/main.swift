// The child process of `TopLevelAwaitTests`: top-level code, as in a user's `main.swift`, where
// every write is awaited. Swift's overload ranking treats top-level code as synchronous, so a
// synchronous overload with the same name and arguments as an async one would be chosen here
// silently; the package builds with warnings as errors, and "no 'async' operations occur within
// 'await' expression" fails that build. At run time each step checks that its write is durable
// (nothing pending, the expected journal sequence) the moment `await` returns, prints "ok STEP",
// and the program ends by SIGKILL (no close, no flush) for the test to reopen the directory.
//
// Usage: canopy-await-probe DIRECTORY
import Canopy
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct Profile: Codable {
    var name: String
    var age: Int
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: canopy-await-probe DIRECTORY\n".utf8))
    exit(2)
}
var configuration = Database.Configuration()
configuration.syncPolicy = .always
let db = try Database(path: CommandLine.arguments[1], configuration)
let root = db.reference(withPath: "probe")
var expectedSequence = try await db.storageStatus()?.lastSequence ?? 0

/// One unbuffered line on standard output.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Checks that the write just awaited is applied and durable, then says so on standard output.
@MainActor func confirm(_ step: String, writes: UInt64 = 1) async throws {
    expectedSequence += writes
    guard let status = try await db.storageStatus() else { throw DatabaseError(.invalidOperation, "no storage") }
    guard status.lastSequence == expectedSequence, status.pendingWrites == 0 else {
        say("not durable after \(step): sequence \(status.lastSequence) (expected \(expectedSequence)), pending \(status.pendingWrites)")
        exit(1)
    }
    say("ok \(step)")
}

try await root.child("set").setValue("a")
try await confirm("setValue")
try await root.child("prioritized").setValue("b", andPriority: 2)
try await confirm("setValue(andPriority:)")
try await root.child("set").setPriority(7)
try await confirm("setPriority")
try await root.updateChildValues(["updated/x": 1, "updated/y": 2])
try await confirm("updateChildValues")
try await root.child("updated/y").removeValue()
try await confirm("removeValue")
try await root.child("profile").setValue(from: Profile(name: "ada", age: 36))
try await confirm("setValue(from:)")
try await root.child("imported").importJSON(Array(#"{"n": 1}"#.utf8))
try await confirm("importJSON bytes")
try await root.child("importedText").importJSON(#"{"n": 2}"#)
try await confirm("importJSON text")
try await root.child("counter").runTransactionBlock { data in
    data.value = (data.value as? Int ?? 0) + 1
    return .success(withValue: data)
}
try await confirm("runTransactionBlock")
try await root.child("counter").runTransaction { data in
    data.value = (data.value as? Int ?? 0) + 10
    return .success(withValue: data)
}
try await confirm("runTransaction")
let batch = db.batch()
try batch.setValue("batched", for: root.child("batch/a"))
try batch.setValue("batched", for: root.child("batch/b"))
try await batch.commit()
try await confirm("WriteBatch.commit")
try await db.runTransaction { transaction in
    let counter = try transaction.getData(root.child("counter")).value as? Int ?? 0
    try transaction.setValue(counter, for: root.child("copy"))
}
try await confirm("Database.runTransaction")
let read = try await root.child("counter").getData()
guard read.value as? Int == 11 else {
    say("getData read \(String(describing: read.value)), expected 11")
    exit(1)
}
say("ok getData")
kill(getpid(), SIGKILL)
