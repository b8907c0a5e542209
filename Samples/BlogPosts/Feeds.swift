import Canopy

/// The quickstart's three lists, each a query (its `getQuery()`), plus a post's comments.
struct Feeds {
    let ref: DatabaseReference

    init(database: Database) {
        self.ref = database.reference()
    }

    /// RecentPostsViewController: the first 100 posts, in push-key (creation) order.
    func recentPostsQuery() -> DatabaseQuery {
        ref.child("posts").queryLimited(toFirst: 100)
    }

    /// MyPostsViewController: the user's copies of their posts.
    func myPostsQuery(uid: String) -> DatabaseQuery {
        ref.child("user-posts").child(uid)
    }

    /// MyTopPostsViewController: the user's posts by star count (fewest first).
    func myTopPostsQuery(uid: String) -> DatabaseQuery {
        ref.child("user-posts").child(uid).queryOrdered(byChild: "starCount")
    }

    /// PostDetailTableViewController: the comments of one post.
    func commentsRef(postID: String) -> DatabaseReference {
        ref.child("post-comments").child(postID)
    }

    /// The posts of `query`, in its order.
    func posts(_ query: DatabaseQuery) async throws -> [Post] {
        let snapshot = try await query.getData()
        return snapshot.childSnapshots.compactMap { Post(snapshot: $0) }
    }

    /// One line for a post: `KEY "TITLE" by AUTHOR, N star(s)`.
    static func line(_ post: Post) -> String {
        "\(post.key) \"\(post.title)\" by \(post.author), \(post.starCount) star\(post.starCount == 1 ? "" : "s")"
    }
}
