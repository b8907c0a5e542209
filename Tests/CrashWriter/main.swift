// The child process of the crash test: opens a durable database, issues the crash workload and
// prints "ack N" as soon as write N is acknowledged (durable under `.always`), until it is killed.
//
// Usage: canopy-crash-writer DIRECTORY SEED COUNT
import Canopy
import CanopyTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 4, let seed = UInt64(arguments[2]), let count = Int(arguments[3]) else {
    FileHandle.standardError.write("usage: canopy-crash-writer DIRECTORY SEED COUNT\n".data(using: .utf8)!)
    exit(2)
}
var configuration = Database.Configuration()
configuration.syncPolicy = .always
configuration.checkpointThreshold = 16 * 1024  // checkpoints happen often, so crashes hit them too
let db: Database
do {
    db = try Database(path: arguments[1], configuration)
} catch {
    FileHandle.standardError.write("open failed: \(error)\n".data(using: .utf8)!)
    exit(3)
}
/// One unbuffered line on standard output (the parent reads acknowledgements as they happen).
@Sendable func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}
say("open")

let done = DispatchSemaphore(value: 0)
for (index, operation) in CrashWorkload.operations(seed: seed, count: count).enumerated() {
    let acknowledge: @Sendable ((any Error)?, DatabaseReference) -> Void = { error, _ in
        if let error {
            say("fail \(index) \(error)")
        } else {
            say("ack \(index)")
        }
        if index == count - 1 { done.signal() }
    }
    switch operation {
    case .set(let path, let value):
        db.reference(withPath: path).setValue(value, withCompletionBlock: acknowledge)
    case .update(let path, let values):
        db.reference(withPath: path).updateChildValues(
            values.mapValues { value -> Any in value.map { $0 as Any } ?? NSNull() }, withCompletionBlock: acknowledge)
    case .remove(let path):
        db.reference(withPath: path).removeValue(completionBlock: acknowledge)
    case .increment(let path):
        db.reference(withPath: path).setValue(ServerValue.increment(1), withCompletionBlock: acknowledge)
    case .setWithPriority(let path, let value, let priority):
        db.reference(withPath: path).setValue(value, andPriority: priority, withCompletionBlock: acknowledge)
    }
}
done.wait()
say("done")
db.close()
