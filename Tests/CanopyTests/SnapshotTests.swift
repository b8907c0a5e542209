import Canopy
import Foundation
import Testing

/// Collects callbacks on the draining thread.
private final class SnapshotBox {
    var snapshots: [DataSnapshot] = []
}

/// Writes `value` at `ref` and returns the snapshot read back.
private func stored(_ value: Any?, at ref: DatabaseReference, _ db: Database) throws -> DataSnapshot {
    try ref.queueSetValue(value)
    return try read(ref, db)
}

private func read(_ ref: DatabaseReference, _ db: Database) throws -> DataSnapshot {
    let box = SnapshotBox()
    ref.getData { _, snapshot in if let snapshot { box.snapshots.append(snapshot) } }
    db.drain()
    return try #require(box.snapshots.first)
}

/// Keys of the children, in iteration order.
private func childKeys(_ snapshot: DataSnapshot) -> [String] {
    snapshot.childSnapshots.map { $0.key ?? "<nil>" }
}

@Suite("Snapshots")
final class SnapshotTests: ManualDatabaseSuite {
    @Test("exists, hasChildren and value of basic values")
    func existsHasChildrenAndValueOfBasicValues() throws {
        let ref = db.reference().child("v")
        let empty = try stored([String: Any](), at: ref, db)
        #expect(!empty.hasChildren() && !empty.exists() && empty.value is NSNull && empty.childrenCount == 0)
        let five = try stored(5, at: ref, db)
        #expect(!five.hasChildren() && five.exists() && (five.value as? NSNumber)?.intValue == 5 && five.childrenCount == 0)
        let object = try stored(["x": 5], at: ref, db)
        #expect(object.hasChildren() && object.exists() && object.childrenCount == 1)
        let priorityOnly = try stored([".priority": 1], at: ref, db)
        #expect(!priorityOnly.exists())
        #expect(priorityOnly.priority is NSNull)
        let null = try stored(nil, at: ref, db)
        #expect(!null.exists() && null.value is NSNull)
        let yes = try stored(true, at: ref, db)
        #expect(yes.exists() && yes.value as? Bool == true)
        let emptyString = try stored("", at: ref, db)
        #expect(emptyString.exists() && emptyString.value as? String == "")
    }

    @Test("childSnapshot(forPath:) and hasChild")
    func childSnapshotForPathAndHasChild() throws {
        let snap = try stored(["x": 5, "y": ["yy": 3, "yz": 4]] as [String: Any], at: db.reference().child("s"), db)
        #expect((snap.childSnapshot(forPath: "x").value as? NSNumber)?.intValue == 5)
        #expect(snap.childSnapshot(forPath: "y").json == ["yy": 3, "yz": 4])
        #expect(snap.childSnapshot(forPath: "y/yz").json == 4)
        #expect(snap.childSnapshot(forPath: "z").value is NSNull)
        #expect(!snap.childSnapshot(forPath: "z").exists())
        #expect(snap.childSnapshot(forPath: "z").key == "z")
        #expect(snap.childSnapshot(forPath: "x/y").value is NSNull)
        #expect(snap.hasChild("x"))
        #expect(snap.hasChild("y/yy"))
        #expect(!snap.hasChild("dinosaur"))
        #expect(!snap.childSnapshot(forPath: "x").hasChild("anything"))
        #expect(!snap.hasChild("x/anything/at/all"))
        #expect(!snap.hasChild("a.b"))
        #expect(throws: DatabaseError.self) { try snap.validatedChildSnapshot(forPath: "a.b") }
        #expect(throws: DatabaseError.self) { try snap.validatedChildSnapshot(forPath: "") }
    }

    @Test("child snapshot keys and refs")
    func childSnapshotKeysAndRefs() throws {
        let ref = db.reference().child("top")
        let snap = try stored(["a": ["b": ["c": 5]]], at: ref, db)
        #expect(snap.key == "top")
        #expect(snap.childSnapshot(forPath: "a").key == "a")
        #expect(snap.childSnapshot(forPath: "a/b/c").key == "c")
        #expect(snap.childSnapshot(forPath: "/a/b/c/").key == "c")
        #expect(snap.childSnapshot(forPath: "////a////b/c///").key == "c")
        #expect(snap.childSnapshot(forPath: "///").key == "top")
        #expect(snap.childSnapshot(forPath: "/z/q/r/v/m").key == "m")
        #expect(snap.childSnapshot(forPath: "a/b/c").ref == ref.child("a/b/c"))
        #expect(snap.childSnapshot(forPath: "a/b/c").ref.pathString == "/top/a/b/c")
        #expect(snap.ref == ref)
        #expect(try read(db.reference(), db).key == nil)
        // One key at a time (a child snapshot builds its path only when asked), and children.
        let a = snap.childSnapshot(forPath: "a")
        let c = a.childSnapshot(forPath: "b").childSnapshot(forPath: "c")
        #expect(a.ref.pathString == "/top/a" && c.key == "c" && c.ref == ref.child("a/b/c"))
        #expect(c.childSnapshot(forPath: "d/e").ref.pathString == "/top/a/b/c/d/e")
        #expect(a.childSnapshots.map(\.ref.pathString) == ["/top/a/b"])
        #expect(a.childSnapshots.first?.childSnapshot(forPath: "c").ref.pathString == "/top/a/b/c")
        #expect(try read(db.reference(), db).childSnapshot(forPath: "top").ref == ref)
        #expect(try read(db.reference(), db).childSnapshots.map(\.key) == ["top"])
    }

    @Test("children: an NSEnumerator of DataSnapshot in default order, with allObjects")
    func childrenEnumerator() throws {
        let ref = db.reference().child("list")
        let snap = try stored(["b": 2, "a": 1, "10": 10, "9": 9, "c": ["d": 4]] as [String: Any], at: ref, db)
        var keys: [String] = []
        for child in snap.children {
            let childSnap = child as! DataSnapshot
            keys.append(childSnap.key ?? "")
        }
        #expect(keys == ["9", "10", "a", "b", "c"])
        let all = snap.children.allObjects
        #expect(all.count == 5)
        #expect(all.compactMap { ($0 as? DataSnapshot)?.key } == keys)
        #expect(childKeys(snap) == keys)
        #expect(snap.childSnapshots.last?.json == ["d": 4])
        #expect(snap.childSnapshots.first?.ref == ref.child("9"))
        // A leaf or missing location has no children.
        #expect(snap.childSnapshot(forPath: "a").children.allObjects.isEmpty)
        #expect(snap.childSnapshot(forPath: "zz").childSnapshots.isEmpty)
    }

    @Test("children iterate by priority, then key")
    func childrenByPriority() throws {
        let ref = db.reference().child("p")
        try ref.queueSetValue(
            [
                "a": ["name": "A", ".priority": 3], "b": ["name": "B"], "c": ["name": "C", ".priority": "x"],
                "d": ["name": "D", ".priority": 1],
                "e": [
                    "thisvaluelast": [".value": 1, ".priority": 3], "name": [".value": "E", ".priority": 2],
                    "thisvaluefirst": [".value": 0, ".priority": 1],
                ],
            ] as [String: Any])
        let snap = try read(ref, db)
        #expect(childKeys(snap) == ["b", "e", "d", "a", "c"])
        #expect(childKeys(snap.childSnapshot(forPath: "e")) == ["thisvaluefirst", "name", "thisvaluelast"])
        let e = try #require(snap.childSnapshots.first { $0.key == "e" })
        #expect(childKeys(e) == ["thisvaluefirst", "name", "thisvaluelast"])
    }

    @Test("export format carries priorities; value does not")
    func exportFormatCarriesPrioritiesValueDoesNot() throws {
        let ref = db.reference().child("x")
        let a = try stored(["foo": "bar", ".priority": 1] as [String: Any], at: ref, db)
        #expect(a.exportJSON == ["foo": "bar", ".priority": 1])
        let exported = try #require(a.valueInExportFormat() as? [String: Any])
        #expect(exported["foo"] as? String == "bar")
        #expect((exported[".priority"] as? NSNumber)?.intValue == 1)
        #expect(exported.count == 2)
        #expect((a.value as? [String: Any])?.count == 1)
        #expect((a.priority as? NSNumber)?.intValue == 1)

        let nested: [String: Any] = ["foo": ["bar": [".value": 5, ".priority": 7] as [String: Any], ".priority": "hi"] as [String: Any]]
        let b = try stored(nested, at: ref, db)
        #expect(b.exportJSON == ["foo": ["bar": [".value": 5, ".priority": 7], ".priority": "hi"]])
        let foo = try #require((b.valueInExportFormat() as? [String: Any])?["foo"] as? [String: Any])
        #expect(foo[".priority"] as? String == "hi")
        let bar = try #require(foo["bar"] as? [String: Any])
        #expect((bar[".value"] as? NSNumber)?.intValue == 5)
        #expect((bar[".priority"] as? NSNumber)?.intValue == 7)
        #expect(b.json == ["foo": ["bar": 5]])
        // A leaf without priority exports as the plain leaf; arrays export as objects.
        #expect(try stored("plain", at: ref, db).valueInExportFormat() as? String == "plain")
        #expect(try stored(["p", "q"], at: ref, db).valueInExportFormat() is [String: Any])
        #expect(try stored(nil, at: ref, db).valueInExportFormat() is NSNull)
    }

    @Test("priority getter: String stays String, numbers stay numbers, NSNull when none")
    func priorityTypes() throws {
        let ref = db.reference().child("n")
        try ref.queueSetValue("c", andPriority: "6")
        let six = try read(ref, db)
        #expect(six.priority as? String == "6")
        #expect(!(six.priority is NSNumber))
        try ref.queueSetValue("d", andPriority: 7)
        let seven = try read(ref, db)
        #expect((seven.priority as? NSNumber)?.intValue == 7)
        #expect(!(seven.priority is String))
        try ref.queueSetValue("d", andPriority: 7.5)
        #expect((try read(ref, db).priority as? NSNumber)?.doubleValue == 7.5)
        try ref.queueSetValue("e")
        #expect(try read(ref, db).priority is NSNull)
        try ref.queueSetValue(["x": 1], andPriority: "obj")
        #expect(try read(ref, db).priority as? String == "obj")
        #expect(try read(ref.child("x"), db).priority is NSNull)
        #expect(try read(ref.child("missing"), db).priority is NSNull)
    }

    @Test("snapshots never change after later writes, deep or shallow")
    func immutability() throws {
        let root = db.reference()
        let box = SnapshotBox()
        root.observe(.value) { box.snapshots.append($0) }
        try root.queueSetValue(["a": ["b": ["c": 1]], "s": "x"] as [String: Any])
        db.drain()
        let first = try #require(box.snapshots.last)
        let firstChild = first.childSnapshot(forPath: "a/b")
        let firstChildren = first.childSnapshots
        try root.child("a/b/c").queueSetValue(2)
        try root.child("a/b/d").queueSetValue(3)
        try root.child("s").queueSetValue("y")
        try root.child("t").queueSetValue(["u": 1])
        db.drain()
        try root.child("a").queueRemoveValue()
        db.drain()
        #expect(first.json == ["a": ["b": ["c": 1]], "s": "x"])
        #expect(firstChild.json == ["c": 1])
        #expect(firstChildren.map { $0.key ?? "" } == ["a", "s"])
        #expect(firstChildren[0].childSnapshot(forPath: "b/c").json == 1)
        let final = try read(root, db)
        #expect(final.json == ["s": "y", "t": ["u": 1]])
        // One value event per write: the initial null, the set, four writes, the removal.
        #expect(box.snapshots.count == 7)
        guard box.snapshots.count == 7 else { return }
        #expect(box.snapshots[0].json == .null)
        #expect(box.snapshots[2].json == ["a": ["b": ["c": 2]], "s": "x"])
        #expect(box.snapshots[5].json == ["a": ["b": ["c": 2, "d": 3]], "s": "y", "t": ["u": 1]])
    }

    @Test("snapshot from getData at a deep location, and of missing data")
    func getDataSnapshots() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let ref = db.reference(withPath: "users/ada")
        try await ref.setValue(["name": "Ada", "born": 1815] as [String: Any])
        let snap = try await ref.getData()
        #expect(snap.key == "ada")
        #expect(snap.childrenCount == 2)
        #expect(snap.childSnapshot(forPath: "born").value as? Int == 1815)
        let missing = try await db.reference(withPath: "nobody/here").getData()
        #expect(!missing.exists())
        #expect(missing.value is NSNull)
        #expect(missing.key == "here")
        #expect(missing.childrenCount == 0)
    }

    @Test("pushed children iterate in creation order", arguments: [false, true])
    func pushedChildrenIterateInCreationOrder(generateFirst: Bool) throws {
        let list = db.reference().child("pushed")
        let count = generateFirst ? 20 : 10
        var refs: [DatabaseReference] = []
        if generateFirst {
            refs = (0..<count).map { _ in list.childByAutoId() }
            // Writing in a scrambled order does not change the iteration order.
            for i in [7, 0, 19, 3, 12, 1, 18, 2, 4, 5, 6, 8, 9, 10, 11, 13, 14, 15, 16, 17] { try refs[i].queueSetValue(i) }
        } else {
            for i in 0..<count {
                let ref = list.childByAutoId()
                refs.append(ref)
                try ref.queueSetValue(i)
            }
        }
        let snap = try read(list, db)
        #expect(snap.childrenCount == UInt(count))
        #expect(snap.childSnapshots.compactMap { ($0.value as? NSNumber)?.intValue } == Array(0..<count))
        #expect(childKeys(snap) == refs.map { $0.key ?? "" })
        for ref in refs {
            let key = try #require(ref.key)
            #expect(key.count == 20)
            #expect(key.hasPrefix("-"))
        }
        #expect(Set(refs.compactMap(\.key)).count == count)
    }

    @Test("childByAutoId writes nothing until a value is set")
    func pushWithoutWrite() throws {
        let ref = db.reference().child("posts").childByAutoId()
        #expect(ref.parent?.key == "posts")
        #expect(try !read(db.reference(), db).exists())
    }
}
