import Canopy
import Foundation
import Testing

/// The Swift snippets of Firebase's "Work with lists of data" and "Read and write data" guides
/// (iOS), pasted unchanged apart from UI code (marked) and the `try` that Canopy's validating
/// writes take.
final class PostDetailController {
    var comments: [DataSnapshot] = []
    var commentsRef: DatabaseReference!
    let kSectionComments = 2
    var insertedRows: [Int] = []  // UI stand-in
    var deletedRows: [Int] = []  // UI stand-in

    func indexOfMessage(_ snapshot: DataSnapshot) -> Int {
        var index = 0
        for comment in self.comments {
            if snapshot.key == comment.key { return index }
            index += 1
        }
        return -1
    }

    func viewWillAppear() {
        // Listen for new comments in the Firebase database
        commentsRef.observe(
            .childAdded,
            with: { (snapshot) -> Void in
                self.comments.append(snapshot)
                self.insertedRows.append(self.comments.count - 1)  // UI: tableView.insertRows(at:with:)
            })
        // Listen for deleted comments in the Firebase database
        commentsRef.observe(
            .childRemoved,
            with: { (snapshot) -> Void in
                let index = self.indexOfMessage(snapshot)
                self.comments.remove(at: index)
                self.deletedRows.append(index)  // UI: tableView.deleteRows(at:with:)
            })
    }
}

@Suite("Firebase guide snippets")
final class FirebaseGuideTests: ManualDatabaseSuite {
    @Test("child_added and child_removed keep a comment list in step, as the lists guide shows")
    func commentsList() throws {
        let ref = db.reference()
        let postKey = ref.child("posts").childByAutoId().key!
        try ref.child("post-comments").child(postKey).childByAutoId().queueSetValue(["uid": "u1", "author": "ada", "text": "first"])
        db.drain()

        let controller = PostDetailController()
        controller.commentsRef = ref.child("post-comments").child(postKey)
        controller.viewWillAppear()
        db.drain()
        #expect(controller.comments.count == 1)

        let second = controller.commentsRef.childByAutoId()
        try second.queueSetValue(["uid": "u2", "author": "grace", "text": "second"])
        try controller.commentsRef.childByAutoId().queueSetValue(["uid": "u1", "author": "ada", "text": "third"])
        db.drain()
        #expect(controller.comments.map { ($0.value as? [String: Any])?["text"] as? String } == ["first", "second", "third"])
        #expect(controller.insertedRows == [0, 1, 2])

        try second.queueRemoveValue()
        db.drain()
        #expect(controller.deletedRows == [1])
        #expect(controller.comments.compactMap { ($0.value as? [String: Any])?["text"] as? String } == ["first", "third"])
    }

    @Test("a value listener iterates snapshot.children in order")
    func valueListenerIteratesChildren() throws {
        let commentsRef = db.reference(withPath: "post-comments/p1")
        try commentsRef.queueSetValue(["b": ["text": "two"], "a": ["text": "one"], "c": ["text": "three"]])
        var texts: [String] = []
        commentsRef.observe(.value) { snapshot in
            texts = []
            for child in snapshot.children {
                let snap = child as! DataSnapshot
                let dict = snap.value as? [String: AnyObject] ?? [:]
                texts.append(dict["text"] as? String ?? "")
            }
        }
        db.drain()
        #expect(texts == ["one", "two", "three"])
        let all = (commentsRef.database.reference(withPath: "post-comments/p1"))
        var allObjects: [DataSnapshot] = []
        all.observeSingleEvent(of: .value) { snapshot in allObjects = snapshot.children.allObjects as! [DataSnapshot] }
        db.drain()
        #expect(allObjects.map(\.key) == ["a", "b", "c"])
    }

    @Test("reading once, with NSDictionary and a trailing cancel block, as the read-and-write guide shows")
    func readOnce() throws {
        let ref = db.reference()
        let userID: String? = "uid42"
        try ref.child("users").child(userID!).queueSetValue(["username": "ada"])
        var username = ""
        ref.child("users").child(userID!).observeSingleEvent(
            of: .value,
            with: { snapshot in
                // Get user value
                let value = snapshot.value as? NSDictionary
                username = value?["username"] as? String ?? ""
            }
        ) { error in
            print(error.localizedDescription)
        }
        var fromGet = ""
        ref.child("users/\(userID!)/username").getData(completion: { error, snapshot in
            guard error == nil else {
                print(error!.localizedDescription)
                return
            }
            fromGet = snapshot?.value as? String ?? "Unknown"
        })
        db.drain()
        #expect(username == "ada")
        #expect(fromGet == "ada")
    }

    @Test("writing a post to two places with one updateChildValues, as the guide's fan-out shows")
    func fanOutUpdate() throws {
        let ref = db.reference()
        let userID = "u1"
        let username = "ada"
        let title = "Hello"
        let body = "World"
        guard let key = ref.child("posts").childByAutoId().key else { return }
        let post = ["uid": userID, "author": username, "title": title, "body": body]
        let childUpdates = ["/posts/\(key)": post, "/user-posts/\(userID)/\(key)/": post]
        try ref.queueUpdateChildValues(childUpdates)
        var posts: JSONValue = .null
        var userPosts: JSONValue = .null
        ref.child("posts").child(key).observeSingleEvent(of: .value) { posts = $0.json }
        ref.child("user-posts").child(userID).child(key).observeSingleEvent(of: .value) { userPosts = $0.json }
        db.drain()
        #expect(posts == ["uid": "u1", "author": "ada", "title": "Hello", "body": "World"])
        #expect(posts == userPosts)
    }
}
