import Canopy
import Foundation
import Testing

@Suite("Query orders on mixed data, and the Firebase guide's blog queries")
struct QueryOrderingTests {
    /// Checks the order of `query` on `data` through a `.value` observer's snapshot iteration
    /// (`childSnapshots` and the `children` enumerator), `getData`, and `child_added` previous keys,
    /// both for initial events and for children added by one write after registration.
    private func expectOrder(
        _ data: JSONValue, _ build: (DatabaseReference) -> DatabaseQuery, _ keys: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "list")

        // Registered before the data exists: one write adds every child.
        let early = QueryEventLog()
        early.observe(build(ref), [.childAdded, .value])
        db.drain()
        #expect(early.take() == [.valueNull()], sourceLocation: sourceLocation)
        try ref.queueSetValue(data)
        db.drain()
        let previous: [String?] = keys.indices.map { $0 == 0 ? nil : keys[$0 - 1] }
        let written = early.take()
        #expect(written.filter { $0.type == .childAdded }.map(\.key) == keys, "child_added after one write", sourceLocation: sourceLocation)
        #expect(
            written.filter { $0.type == .childAdded }.map(\.prev) == previous, "previous keys after one write",
            sourceLocation: sourceLocation)
        #expect(written.last?.children == keys, "value after one write", sourceLocation: sourceLocation)

        // Registered on existing data: the initial events.
        expectWindow(build(ref), db, keys, sourceLocation: sourceLocation)

        // The `children` enumerator of a `.value` snapshot iterates in the same order.
        var enumerated: [String] = []
        build(ref).observeSingleEvent(of: .value) { snapshot in
            for child in snapshot.children {
                enumerated.append((child as? DataSnapshot)?.key ?? "?")
            }
        }
        db.drain()
        #expect(enumerated == keys, "snapshot.children", sourceLocation: sourceLocation)
    }

    // MARK: Type orders

    @Test("priority order: none first (ties by key, integer keys first), numbers by value, then strings")
    func priorityOrder() throws {
        let data: JSONValue = [
            "b": 1, "a": 2, "10": 3, "9": 4,
            "n5": [".value": 5, ".priority": 100], "n2": [".value": 6, ".priority": 1.5], "n1": [".value": 7, ".priority": -5],
            "n4": [".value": 8, ".priority": 1.0], "n3": [".value": 9, ".priority": 1], "n0": [".value": 10, ".priority": -0.5],
            "s4": [".value": 11, ".priority": "a"], "s2": [".value": 12, ".priority": "B"], "s1": [".value": 13, ".priority": ""],
            "s3": [".value": 14, ".priority": "a"], "s0": [".value": 15, ".priority": "Z"], "o": ["x": 1, ".priority": 0],
        ]
        let expected = ["9", "10", "a", "b", "n1", "n0", "o", "n3", "n4", "n2", "n5", "s1", "s2", "s0", "s3", "s4"]
        try self.expectOrder(data, { $0.queryOrderedByPriority() }, expected)
        // The default order is the priority order.
        try self.expectOrder(data, { $0 }, expected)
        try self.expectOrder(data, { $0.queryLimited(toLast: 100) }, expected)
    }

    @Test("mixed numeric and string priorities (datasnapshot.test.ts)")
    func mixedNumericAndStringPriorities() throws {
        let priorities: [(String, JSONValue)] = [
            ("alpha42", "zed"), ("noPriorityC", .null), ("num41", 500), ("noPriorityB", .null), ("num80", 4000.1), ("num50", 4000),
            ("num10", 24), ("alpha41", "zed"), ("alpha20", "horse"), ("num20", 123), ("num70", 4000.01), ("noPriorityA", .null),
            ("alpha30", "tree"), ("num30", 300), ("num60", 4000.001), ("alpha10", "0horse"), ("num42", 500), ("alpha40", "zed"),
            ("num40", 500),
        ]
        var object: [String: JSONValue] = [:]
        for (key, priority) in priorities {
            object[key] = priority == .null ? .string(key) : [".value": .string(key), ".priority": priority]
        }
        try self.expectOrder(
            .object(object), { $0 },
            [
                "noPriorityA", "noPriorityB", "noPriorityC", "num10", "num20", "num30", "num40", "num41", "num42", "num50", "num60",
                "num70", "num80",
                "alpha10", "alpha20", "alpha30", "alpha40", "alpha41", "alpha42",
            ])
    }

    @Test("key order: integer keys numerically (shorter first on ties), then strings by UTF-16 code units; priorities ignored")
    func keyOrder() throws {
        let keys = [
            "foo", "bar", "03", "0", "100", "20", "5", "3", "003", "9", "-1", "-2147483648", "2147483647", "2147483648", "A", "Z", "_", "a",
            "aa", "-", "1a", " 1", "~", "\u{1F600}", "\u{FF61}",
        ]
        var object: [String: JSONValue] = [:]
        for (i, key) in keys.enumerated() { object[key] = [".value": .int(Int64(i)), ".priority": .int(Int64(keys.count - i))] }
        let expected = [
            "-2147483648", "-1", "0", "3", "03", "003", "5", "9", "20", "100", "2147483647",
            " 1", "-", "1a", "2147483648", "A", "Z", "_", "a", "aa", "bar", "foo", "~", "\u{1F600}", "\u{FF61}",
        ]
        try self.expectOrder(.object(object), { $0.queryOrderedByKey() }, expected)
    }

    @Test("canonically equivalent keys are different keys, as in Firebase: two children, in UTF-16 order")
    func canonicallyEquivalentKeys() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "list")
        try ref.child("\u{E9}").queueSetValue(1)
        try ref.child("e\u{301}").queueSetValue(2)
        db.drain()
        var keys: [[Unicode.Scalar]] = []
        var values: [Int] = []
        ref.queryOrderedByKey().observeSingleEvent(of: .value) { snapshot in
            for child in snapshot.childSnapshots {
                keys.append(Array((child.key ?? "").unicodeScalars))
                values.append(child.value as? Int ?? -1)
            }
        }
        db.drain()
        // Swift's `==` would call the two keys equal: compare their scalars.
        #expect(keys == [Array("e\u{301}".unicodeScalars), ["\u{E9}"]])
        #expect(values == [2, 1])
    }

    @Test("integer keys in the default order (order.test.ts)")
    func integerKeysInDefaultOrder() throws {
        let keys = ["foo", "bar", "03", "0", "100", "20", "5", "3", "003", "9"]
        try self.expectOrder(
            .object(Dictionary(uniqueKeysWithValues: keys.map { ($0, JSONValue.bool(true)) })), { $0 },
            ["0", "3", "03", "003", "5", "9", "20", "100", "bar", "foo"])
    }

    @Test("value order: false, true, numbers (ints and doubles mixed), strings, objects; ties by key incl. integer keys")
    func valueOrder() throws {
        let data: JSONValue = [
            "f": false, "t": true, "im1": -1, "dm15": -1.5, "d1": 1.0, "i1": 1, "d15": 1.5, "i10": 10, "big": 9_007_199_254_740_993,
            "huge": 1e300,
            "s3": "", "s2": "B", "s": "a", "sZ": "Z", "sa2": "a", "o": ["x": 1], "o2": ["a": 0], "10": ["z": true], "2": ["y": false],
            "7b": 7, "7a": 7.0, "70": 7, "007": 7,
        ]
        let expected = [
            "f", "t", "dm15", "im1", "d1", "i1", "d15", "007", "70", "7a", "7b", "i10", "big", "huge",
            "s3", "s2", "sZ", "s", "sa2", "2", "10", "o", "o2",
        ]
        try self.expectOrder(data, { $0.queryOrderedByValue() }, expected)
    }

    @Test("orderByValue with equal numbers (order_by.test.ts)")
    func orderByValueWithEqualNumbers() throws {
        try self.expectOrder(
            ["alex": 60, "rob": 56, "vassili": 55.5, "tony": 52, "greg": 52], { $0.queryOrderedByValue() },
            ["greg", "tony", "vassili", "rob", "alex"])
    }

    @Test("child order: missing/leaf (null) first, false, true, numbers, strings, objects; ties by key incl. integer keys")
    func childOrder() throws {
        let data: JSONValue = [
            "m": ["w": 1], "7": "leaf", "3": ["u": 1], "x": 5,
            "f": ["v": false], "t": ["v": true], "n": ["v": -2], "d": ["v": 0.5], "i": ["v": 1], "i2": ["v": 1.0], "1": ["v": 1],
            "s0": ["v": ""], "sB": ["v": "B"], "sa": ["v": "a"], "o2": ["v": ["b": 1]], "o1": ["v": ["a": 2]], "10": ["v": ["c": 3]],
        ]
        let expected = ["3", "7", "m", "x", "f", "t", "n", "d", "1", "i", "i2", "s0", "sB", "sa", "10", "o1", "o2"]
        try self.expectOrder(data, { $0.queryOrdered(byChild: "v") }, expected)
    }

    @Test("orderByChild on a flat and on a nested path")
    func orderByChildOnFlatAndNestedPath() throws {
        try self.expectOrder(
            [
                "alex": ["nuggets": 60], "rob": ["nuggets": 56], "vassili": ["nuggets": 55.5], "tony": ["nuggets": 52],
                "greg": ["nuggets": 52],
            ],
            { $0.queryOrdered(byChild: "nuggets") }, ["greg", "tony", "vassili", "rob", "alex"])
        try self.expectOrder(
            [
                "u1": ["name": "Andrew", "deep": ["nuggets": 35]], "u2": ["name": "Rob", "deep": ["nuggets": 40]],
                "u3": ["name": "Greg", "deep": ["nuggets": 38]],
            ],
            { $0.queryOrdered(byChild: "deep/nuggets") }, ["u1", "u3", "u2"])
    }

    @Test("child snapshots iterate their own children in the default order, whatever the parent query")
    func childSnapshotsIterateInDefaultOrder() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let ref = db.reference(withPath: "list")
        try ref.queueSetValue(
            [
                "a": [
                    "thisvaluefirst": [".value": true, ".priority": 1], "name": [".value": "Michael", ".priority": 2],
                    "thisvaluelast": [".value": true, ".priority": 3],
                ],
                "b": [
                    "thisvaluefirst": [".value": true, ".priority": .null], "name": [".value": "Rob", ".priority": 2],
                    "thisvaluelast": [".value": true, ".priority": 3],
                ],
                "c": [
                    "thisvaluefirst": [".value": true, ".priority": 1], "name": [".value": "Jonny", ".priority": 2],
                    "thisvaluelast": [".value": true, ".priority": "somestring"],
                ],
            ] as JSONValue)
        var top: [String] = []
        var inner: [String] = []
        var childOfB: [String] = []
        ref.queryOrdered(byChild: "name").observeSingleEvent(of: .value) { snapshot in
            top = snapshot.childSnapshots.map { $0.key ?? "" }
            inner = snapshot.childSnapshots.first?.childSnapshots.map { $0.key ?? "" } ?? []
            childOfB = snapshot.childSnapshot(forPath: "b").childSnapshots.map { $0.key ?? "" }
        }
        db.drain()
        #expect(top == ["c", "a", "b"])
        #expect(inner == ["thisvaluefirst", "name", "thisvaluelast"])
        #expect(childOfB == ["thisvaluefirst", "name", "thisvaluelast"])
    }

    // MARK: The blog queries of the Firebase guide ("Work with lists of data")

    /// Writes `count` posts with `childByAutoId`, returning their keys in creation order.
    private func pushPosts(_ posts: DatabaseReference, count: Int, stars: (Int) -> Int) throws -> [String] {
        var keys: [String] = []
        for i in 0..<count {
            let post = posts.childByAutoId()
            keys.append(post.key!)
            let value: JSONValue = [
                "uid": .string("u\(i % 3)"), "title": .string("post \(i)"), "starCount": .int(Int64(stars(i))),
                "metrics": ["views": .int(Int64((i * 37) % 11))],
            ]
            try post.queueSetValue(value)
        }
        return keys
    }

    @Test("queryOrdered(byChild: \"starCount\") and (byChild: \"metrics/views\") order posts by those values, ties by push ID")
    func blogOrderedQueries() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let posts = db.reference(withPath: "posts")
        let stars = { (i: Int) in (i * 7) % 5 }
        let keys = try self.pushPosts(posts, count: 20, stars: stars)
        db.drain()
        let byStars = keys.indices.sorted { (stars($0), $0) < (stars($1), $1) }.map { keys[$0] }
        let views = { (i: Int) in (i * 37) % 11 }
        let byViews = keys.indices.sorted { (views($0), $0) < (views($1), $1) }.map { keys[$0] }
        expectWindow(posts.queryOrdered(byChild: "starCount"), db, byStars)
        expectWindow(posts.queryOrdered(byChild: "metrics/views"), db, byViews)
        // The guide's "most starred" query: the last N by starCount.
        expectWindow(posts.queryOrdered(byChild: "starCount").queryLimited(toLast: 5), db, Array(byStars.suffix(5)))
        expectWindow(
            posts.queryOrdered(byChild: "metrics/views").queryStarting(atValue: 5).queryLimited(toFirst: 3), db,
            Array(byViews.filter { views(keys.firstIndex(of: $0)!) >= 5 }.prefix(3)))
    }

    @Test("queryLimited(toFirst: 100) on pushed posts: the first 100, in creation order")
    func recentPosts() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let posts = db.reference(withPath: "posts")
        let keys = try self.pushPosts(posts, count: 130, stars: { $0 })
        db.drain()
        #expect(keys == keys.sorted(), "push IDs sort in creation order")
        let snapshot = expectWindow(posts.queryLimited(toFirst: 100), db, Array(keys.prefix(100)))
        #expect(snapshot?.childSnapshots.map { $0.childSnapshot(forPath: "title").json } == (0..<100).map { .string("post \($0)") })
        expectWindow(posts.queryLimited(toLast: 100), db, Array(keys.suffix(100)))
        expectWindow(posts.queryOrderedByKey().queryLimited(toFirst: 100), db, Array(keys.prefix(100)))
    }

    @Test("queryOrdered(byChild: \"starCount\").queryLimited(toLast: 3) follows star changes with moves, changes and window swaps")
    func topPostsLive() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let posts = db.reference(withPath: "posts")
        // Keys p0…p5 so that ties by key are readable; stars 10, 20, 30, 40, 50, 60.
        for i in 0..<6 {
            try posts.child("p\(i)").queueSetValue(
                ["title": JSONValue.string("t\(i)"), "starCount": .int(Int64((i + 1) * 10))] as JSONValue)
        }
        db.drain()
        let query = posts.queryOrdered(byChild: "starCount").queryLimited(toLast: 3)
        let log = QueryEventLog()
        log.observe(query)
        db.drain()
        func post(_ i: Int, _ stars: Int) -> JSONValue { ["title": .string("t\(i)"), "starCount": .int(Int64(stars))] }
        /// The events of setting `path` to `value`.
        func events(setting path: String, to value: JSONValue) throws -> [QueryEvent] {
            try posts.child(path).queueSetValue(value)
            db.drain()
            return log.take()
        }
        #expect(
            log.take() == [
                .added("p3", nil, post(3, 40)), .added("p4", "p3", post(4, 50)), .added("p5", "p4", post(5, 60)),
                .value(["p3": post(3, 40), "p4": post(4, 50), "p5": post(5, 60)]),
            ])

        // A star inside the window that reorders it: moved + changed, same previous key.
        #expect(
            try events(setting: "p3/starCount", to: 55) == [
                .moved("p3", "p4", post(3, 55)), .changed("p3", "p4", post(3, 55)),
                .value(["p4": post(4, 50), "p3": post(3, 55), "p5": post(5, 60)]),
            ])

        // A change of the indexed value that keeps the position still moves (see *Events*).
        #expect(
            try events(setting: "p5/starCount", to: 61) == [
                .moved("p5", "p3", post(5, 61)), .changed("p5", "p3", post(5, 61)),
                .value(["p4": post(4, 50), "p3": post(3, 55), "p5": post(5, 61)]),
            ])

        // A change outside the indexed child: changed only.
        let p4new: JSONValue = ["title": "new", "starCount": 50]
        #expect(
            try events(setting: "p4/title", to: "new") == [
                .changed("p4", nil, p4new), .value(["p4": p4new, "p3": post(3, 55), "p5": post(5, 61)]),
            ])

        // A post outside the window gets stars and enters: the lowest one leaves.
        #expect(
            try events(setting: "p0/starCount", to: 100) == [
                .removed("p4", p4new), .added("p0", "p5", post(0, 100)),
                .value(["p3": post(3, 55), "p5": post(5, 61), "p0": post(0, 100)]),
            ])

        // A post inside the window drops below the window: the best one outside comes in.
        #expect(
            try events(setting: "p5/starCount", to: 1) == [
                .removed("p5", post(5, 61)), .added("p4", nil, p4new), .value(["p4": p4new, "p3": post(3, 55), "p0": post(0, 100)]),
            ])

        // Changes outside the window raise nothing.
        try posts.child("p1/starCount").queueSetValue(21)
        #expect(try events(setting: "p2/title", to: "x") == [])

        // A tie with the lowest window entry: broken by key (p1 < p4), so p1 stays out.
        #expect(try events(setting: "p1/starCount", to: 50) == [])
        // Ties the other way (p9 > p4): enters.
        #expect(
            try events(setting: "p9", to: ["title": "t9", "starCount": 50]) == [
                .removed("p4", p4new), .added("p9", nil, post(9, 50)), .value(["p9": post(9, 50), "p3": post(3, 55), "p0": post(0, 100)]),
            ])
        #expect(log.cancellations.isEmpty)

        // And a one-shot read agrees with the live window.
        expectWindow(query, db, ["p9", "p3", "p0"])
    }

    @Test("keepSynced(true) then getData() of an ordered limited query returns the right window as data changes")
    func keepSyncedGetData() async throws {
        let db = try Database.inMemory()
        defer { db.close() }
        let posts = db.reference(withPath: "posts")
        for i in 0..<10 {
            try await posts.child("p\(i)").setValue(
                ["starCount": JSONValue.int(Int64((i * 3) % 7)), "title": .string("t\(i)")] as JSONValue)
        }
        let query = posts.queryOrdered(byChild: "starCount").queryLimited(toLast: 3)
        query.keepSynced(true)
        func expected(_ stars: [String: Int]) -> [String] {
            stars.keys.sorted { (stars[$0]!, $0) < (stars[$1]!, $1) }.suffix(3).map { $0 }
        }
        var stars = Dictionary(uniqueKeysWithValues: (0..<10).map { ("p\($0)", ($0 * 3) % 7) })
        var snapshot = try await query.getData()
        #expect(snapshot.childSnapshots.map(\.key) == expected(stars))
        #expect(
            snapshot.childSnapshots.map { $0.childSnapshot(forPath: "starCount").json } == expected(stars).map { .int(Int64(stars[$0]!)) })

        for (key, value) in [("p0", 9), ("p5", 8), ("p2", -1), ("p7", 9)] {
            try await posts.child(key).child("starCount").setValue(value)
            stars[key] = value
            snapshot = try await query.getData()
            #expect(snapshot.childSnapshots.map(\.key) == expected(stars), "after \(key) = \(value)")
        }
        try await posts.child("p7").removeValue()
        stars["p7"] = nil
        snapshot = try await query.getData()
        #expect(snapshot.childSnapshots.map(\.key) == expected(stars))
        #expect(snapshot.priority is NSNull)

        // Released: still the same answers.
        query.keepSynced(false)
        snapshot = try await query.getData()
        #expect(snapshot.childSnapshots.map(\.key) == expected(stars))
        // A different window of the same index, without keepSynced.
        let first = try await posts.queryOrdered(byChild: "starCount").queryLimited(toFirst: 2).getData()
        #expect(first.childSnapshots.map(\.key) == stars.keys.sorted { (stars[$0]!, $0) < (stars[$1]!, $1) }.prefix(2).map { $0 })
    }

    @Test(
        "the guide's star updates (fan-out with ServerValue.increment, then a toggling transaction) keep a starCount toLast(2) window right"
    )
    func starUpdatesKeepTopPostsRight() throws {
        let db = try manualDatabase()
        defer { db.close() }
        let root = db.reference()
        let posts = root.child("posts")
        for i in 0..<5 {
            try posts.child("p\(i)").queueSetValue(["title": JSONValue.string("t\(i)"), "starCount": .int(Int64(i))] as JSONValue)
        }
        db.drain()
        let log = QueryEventLog()
        log.observe(posts.queryOrdered(byChild: "starCount").queryLimited(toLast: 2))
        db.drain()
        #expect(log.take().map(\.key) == ["p3", "p4", "posts"])

        // The guide's fan-out star: p1 goes from 1 to 4 stars, tying with p4; ties by key put p1 first.
        let postID = "p1"
        let userID = "u"
        for _ in 0..<3 {
            let updates =
                [
                    "posts/\(postID)/stars/\(userID)": true,
                    "posts/\(postID)/starCount": ServerValue.increment(1),
                    "user-posts/\(postID)/stars/\(userID)": true,
                    "user-posts/\(postID)/starCount": ServerValue.increment(1),
                ] as [String: Any]
            try root.queueUpdateChildValues(updates)
        }
        db.drain()
        let starred: JSONValue = ["title": "t1", "starCount": 4, "stars": ["u": true]]
        let p4: JSONValue = ["title": "t4", "starCount": 4]
        #expect(
            log.take() == [
                .removed("p3", ["title": "t3", "starCount": 3]), .added("p1", nil, starred), .value(["p1": starred, "p4": p4]),
            ])

        // The guide's toggling transaction removes the star: p1 drops to 3, tying with p3, before it.
        toggleStar(posts.child(postID), uid: userID) { error, committed, _ in
            #expect(error == nil)
            #expect(committed)
        }
        db.drain()
        let p3: JSONValue = ["title": "t3", "starCount": 3]
        #expect(log.take() == [.removed("p1", starred), .added("p3", nil, p3), .value(["p3": p3, "p4": p4])])
        #expect(queryRead(root.child("user-posts/p1/starCount"), db)?.json == 3)
    }
}
