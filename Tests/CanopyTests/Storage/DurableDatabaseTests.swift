import CanopyCore
import CanopyStorage
import CanopyTestSupport
import Foundation
import Testing

@testable import Canopy

@Suite("Durable database: reopening, locking, checkpoints")
struct DurableDatabaseTests {
    @Test("Writes survive a clean close and reopen, priorities included")
    func reopenAfterClose() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path, .manual())
        let log = CompletionLog()
        db.reference(withPath: "posts/a").setValue(["title": "Hello", "stars": 3], withCompletionBlock: log.callback(0))
        db.reference(withPath: "posts/b").setValue("x", andPriority: 5, withCompletionBlock: log.callback(1))
        db.reference(withPath: "posts").updateChildValues(["c/title": "C", "a/stars": 4], withCompletionBlock: log.callback(2))
        db.reference(withPath: "count").setValue(ServerValue.increment(2), withCompletionBlock: log.callback(3))
        db.reference(withPath: "gone").setValue(1, withCompletionBlock: log.callback(4))
        db.reference(withPath: "gone").removeValue(completionBlock: log.callback(5))
        db.drain()
        #expect(log.succeeded == [0, 1, 2, 3, 4, 5])
        let before = try exportedTree(db)
        db.close()

        let reopened = try Database(path: dir.path, .manual())
        defer { reopened.close() }
        #expect(try exportedTree(reopened) == before)
        #expect(try exportedTree(reopened)["posts"]?["a"]?["stars"] == 4)
        #expect(try exportedTree(reopened)["count"] == 2)
    }

    @Test("A second open of the same directory fails with .inUse naming this process; nothing is damaged")
    func lock() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let db = try Database(path: dir.path, .manual())
        try db.reference(withPath: "a").queueSetValue(1)
        db.drain()
        do {
            _ = try Database(path: dir.path, .manual())
            Issue.record("the second open succeeded")
        } catch {
            #expect(error.code == .inUse)
            #expect(error.message.contains("in use by pid \(getpid())"))
        }
        try db.reference(withPath: "b").queueSetValue(2)
        db.drain()
        db.close()
        #expect(try reopenedTree(dir.path) == ["a": 1, "b": 2])
    }
}
