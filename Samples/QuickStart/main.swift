import Canopy
import Foundation

// A short tour: write, observe, update and read back, on an in-memory database.
let db = try Database.inMemory()
let posts = db.reference(withPath: "posts")

posts.observe(.childAdded) { snapshot in
    let post = snapshot.value as? [String: Any]
    print("child_added", snapshot.key ?? "", post?["title"] as? String ?? "")
}

let first = posts.childByAutoId()
try await first.setValue(["title": "Hello, Canopy", "starCount": 0, "author": "ada"])
try await posts.childByAutoId().setValue(["title": "Second post", "starCount": 2, "author": "grace"])
try await first.updateChildValues(["starCount": ServerValue.increment(1)])

// The ten most-starred posts, fewest stars first. (Typed `childSnapshots`, not the `children`
// NSEnumerator: Swift 6.3.1's optimizer crashes on an NSEnumerator loop in top-level async code.)
let top = try await posts.queryOrdered(byChild: "starCount").queryLimited(toLast: 10).getData()
for snap in top.childSnapshots {
    let post = snap.value as? [String: Any] ?? [:]
    print(snap.key ?? "", post["title"] as? String ?? "", "stars:", post["starCount"] as? Int ?? 0)
}
print("posts:", top.childrenCount)
db.close()
