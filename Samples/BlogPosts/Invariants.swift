import Canopy

/// Counts the blog and checks its invariants: every post equals its copy under its author's
/// posts (and the other way round), and every `starCount` is the number of its stars.
struct Invariants {
    var posts = 0
    var stars = 0
    var comments = 0
    var users = 0
    var violations: [String] = []

    static func check(_ database: Database) async throws -> Invariants {
        var result = Invariants()
        let root = try await database.reference().getData()
        let posts = root.childSnapshot(forPath: "posts")
        let userPosts = root.childSnapshot(forPath: "user-posts")
        result.users = Int(root.childSnapshot(forPath: "users").childrenCount)
        for snapshot in posts.childSnapshots {
            result.posts += 1
            guard let post = Post(snapshot: snapshot) else {
                result.violations.append("post \(snapshot.key ?? "") is not an object")
                continue
            }
            result.stars += post.stars.count
            let copy = userPosts.childSnapshot(forPath: "\(post.uid)/\(post.key)")
            if copy.json != snapshot.json {
                result.violations.append("post \(post.key) differs from /user-posts/\(post.uid)/\(post.key)")
            }
            if post.starCount != post.stars.count {
                result.violations.append("post \(post.key) has starCount \(post.starCount) but \(post.stars.count) stars")
            }
        }
        for user in userPosts.childSnapshots {
            for copy in user.childSnapshots where !posts.hasChild(copy.key ?? "") {
                result.violations.append("/user-posts/\(user.key ?? "")/\(copy.key ?? "") has no post")
            }
        }
        for postComments in root.childSnapshot(forPath: "post-comments").childSnapshots {
            result.comments += Int(postComments.childrenCount)
        }
        return result
    }
}
