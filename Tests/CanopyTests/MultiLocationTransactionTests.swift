import Canopy
import CanopyTestSupport
import Foundation
import Synchronization
import Testing

/// `Database.runTransaction`: reads of any locations, then writes to any others, all or nothing.
@Suite("Multi-location transactions")
struct MultiLocationTransactionTests {
    /// Runs a transaction in drain mode; returns its outcome.
    static func run<T>(_ db: Database, _ block: @escaping (Transaction) throws -> T) -> Result<T, any Error>? {
        var outcome: Result<T, any Error>?
        db.runTransaction(block) { outcome = $0 }
        db.drain()
        return outcome
    }

    struct Refused: Error, Equatable {}

    @Test("reads several locations, writes several others as one write, returns the block's value")
    func commits() throws {
        let db = try manualDatabase()
        defer { db.close() }
        try db.reference(withPath: "accounts").queueSetValue(["a": 10, "b": 5])
        var rootEvents: [JSONValue] = []
        db.reference().observe(.value) { rootEvents.append($0.json) }
        db.drain()
        let a = db.reference(withPath: "accounts/a")
        let b = db.reference(withPath: "accounts/b")
        let outcome = Self.run(db) { transaction -> Int in
            let x = try transaction.getData(a).value as? Int ?? 0
            let y = try transaction.getData(b).value as? Int ?? 0
            try transaction.setValue(x - 3, for: a)
            try transaction.setValue(y + 3, for: b)
            try transaction.updateChildValues(["count": 1, "last/amount": 3], for: db.reference(withPath: "transfers"))
            try transaction.removeValue(for: db.reference(withPath: "pending"))
            return x + y
        }
        #expect(try outcome?.get() == 15)
        // One event for the whole commit: observers never see part of it.
        #expect(
            rootEvents == [
                ["accounts": ["a": 10, "b": 5]], ["accounts": ["a": 7, "b": 8], "transfers": ["count": 1, "last": ["amount": 3]]],
            ])
    }

    @Test("a block that throws aborts: nothing written, no event, its error returned as thrown")
    func thrownErrorAborts() throws {
        let db = try manualDatabase()
        defer { db.close() }
        var events = 0
        db.reference().observe(.value) { _ in events += 1 }
        db.drain()
        let outcome = Self.run(db) { transaction -> Int in
            try transaction.setValue(1, for: db.reference(withPath: "x"))
            throw Refused()
        }
        #expect(throws: Refused.self) { try outcome?.get() }
        #expect(events == 1)
        #expect(db.reference().blockingValue(db) == .null)
    }

    @Test("reads after a write, use after the block, invalid writes and other databases' references are errors")
    func misuse() throws {
        let db = try manualDatabase()
        let other = try manualDatabase()
        defer {
            db.close()
            other.close()
        }
        let readAfterWrite = Self.run(db) { transaction -> Void in
            try transaction.setValue(1, for: db.reference(withPath: "x"))
            _ = try transaction.getData(db.reference(withPath: "y"))
        }
        #expect(Self.code(readAfterWrite) == .invalidOperation)
        #expect(db.reference(withPath: "x").blockingValue(db) == .null)

        var kept: Transaction?
        _ = Self.run(db) { transaction in kept = transaction }
        #expect(throws: DatabaseError.self) { try kept?.getData(db.reference()) }
        #expect(throws: DatabaseError.self) { try kept?.setValue(1, for: db.reference(withPath: "late")) }

        let invalid = Self.run(db) { transaction -> Void in
            try transaction.setValue(1, for: db.reference(withPath: "ok"))
            try transaction.setValue(["a.b": 1], for: db.reference(withPath: "bad"))
        }
        #expect(Self.code(invalid) == .invalidKey)
        #expect(db.reference(withPath: "ok").blockingValue(db) == .null)

        let foreign = Self.run(db) { transaction -> Void in _ = try transaction.getData(other.reference(withPath: "a")) }
        #expect(Self.code(foreign) == .invalidOperation)
        let info = Self.run(db) { transaction -> Void in try transaction.setValue(1, for: db.reference(withPath: ".info/x")) }
        #expect(Self.code(info) == .invalidPath)
    }

    @Test("writes to the same location in one transaction apply in order, server values included")
    func overlappingWrites() throws {
        let db = try manualDatabase()
        defer { db.close() }
        try db.reference(withPath: "n").queueSetValue(["count": 1, "keep": true])
        db.drain()
        let n = db.reference(withPath: "n")
        _ = Self.run(db) { transaction in
            try transaction.setValue(ServerValue.increment(2), for: n.child("count"))
            try transaction.updateChildValues(["count": ServerValue.increment(10), "extra": 1], for: n)
            try transaction.setValue(["deep": 1], for: n.child("extra"))
        }
        #expect(n.blockingValue(db) == ["count": 13, "keep": true, "extra": ["deep": 1]])
    }

    @Test("8 threads of 2-location transfers: no lost update, no partial write, each block run exactly once, serializable")
    func concurrentTransfers() throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let accounts = 6
        let initial = 1_000
        try db.reference(withPath: "accounts").queueSetValue(Dictionary(uniqueKeysWithValues: (0..<accounts).map { ("a\($0)", initial) }))
        // Every snapshot of the accounts any observer sees holds the whole balance: no partial write.
        let partial = Locked(0)
        let snapshots = Locked(0)
        db.reference(withPath: "accounts").observe(.value) { snapshot in
            let sum = snapshot.childSnapshots.reduce(0) { $0 + ($1.value as? Int ?? 0) }
            snapshots.withLock { $0 += 1 }
            if sum != accounts * initial { partial.withLock { $0 += 1 } }
        }
        /// What each committed transaction read and wrote, and each plain write, in commit order.
        enum Logged: Sendable {
            case transfer(from: Int, to: Int, read: [Int], amount: Int)
            case noise(thread: Int, value: Int)
        }
        let log = Locked<[Logged]>([])
        let runs = Atomic<Int>(0)
        let threads = 8
        let perThread = 300
        let done = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededGenerator(seed: UInt64(thread) &* 7919 &+ 1)
            for i in 0..<perThread {
                let from = Int.random(in: 0..<accounts, using: &random)
                let to = (from + Int.random(in: 1..<accounts, using: &random)) % accounts
                let want = Int.random(in: 1...300, using: &random)
                let fromRef = db.reference(withPath: "accounts/a\(from)")
                let toRef = db.reference(withPath: "accounts/a\(to)")
                done.enter()
                db.runTransaction(
                    { transaction -> Logged in
                        runs.add(1, ordering: .relaxed)
                        let x = try transaction.getData(fromRef).value as? Int ?? 0
                        let y = try transaction.getData(toRef).value as? Int ?? 0
                        let amount = min(x, want)
                        try transaction.setValue(x - amount, for: fromRef)
                        try transaction.setValue(y + amount, for: toRef)
                        return .transfer(from: from, to: to, read: [x, y], amount: amount)
                    },
                    completion: { result in
                        if case .success(let entry) = result { log.withLock { $0.append(entry) } }
                        done.leave()
                    })
                if i % 3 == 0 {
                    done.enter()
                    db.reference(withPath: "noise/t\(thread)").setValue(i) { error, _ in
                        if error == nil { log.withLock { $0.append(.noise(thread: thread, value: i)) } }
                        done.leave()
                    }
                }
            }
        }
        try done.wait(for: "every transaction and write to complete")
        // The oracle: replay the log in commit order; every transaction must have read what the
        // writes before it left.
        var balances = Array(repeating: initial, count: accounts)
        var noise: [String: JSONValue] = [:]
        var transfers = 0
        for entry in log.value {
            switch entry {
            case .transfer(let from, let to, let read, let amount):
                #expect(read == [balances[from], balances[to]], "transfer #\(transfers) read a stale balance")
                balances[from] -= amount
                balances[to] += amount
                transfers += 1
            case .noise(let thread, let value):
                noise["t\(thread)"] = .int(Int64(value))
            }
        }
        #expect(transfers == threads * perThread)
        #expect(runs.load(ordering: .relaxed) == threads * perThread)
        let final = try blockingRead(db.reference())
        #expect(
            final.childSnapshot(forPath: "accounts").json
                == .object(
                    Dictionary(uniqueKeysWithValues: balances.enumerated().map { ("a\($0.offset)", JSONValue.int(Int64($0.element))) })))
        #expect(final.childSnapshot(forPath: "noise").json == .object(noise))
        #expect(partial.value == 0)
        #expect(snapshots.value > 1)
    }

    static func code<T>(_ outcome: Result<T, any Error>?) -> DatabaseError.Code? {
        guard case .failure(let error)? = outcome else { return nil }
        return (error as? DatabaseError)?.code
    }
}

/// Reads `ref` now (the database runs its own loop).
func blockingRead(_ ref: DatabaseReference) throws -> DataSnapshot {
    let result = Locked<DataSnapshot?>(nil)
    let done = DispatchSemaphore(value: 0)
    ref.getData { _, snapshot in
        result.withLock { $0 = snapshot }
        done.signal()
    }
    try done.wait(for: "a read of \(ref.pathString)")
    guard let snapshot = result.value else { throw DatabaseError(.closed, "no snapshot") }
    return snapshot
}

extension DatabaseReference {
    /// The value here now, in drain mode.
    func blockingValue(_ db: Database) -> JSONValue {
        var value: JSONValue = .null
        self.getData { _, snapshot in value = snapshot?.json ?? .null }
        db.drain()
        return value
    }
}
