import Canopy

/// The writes of the quickstart: sign up, post, star and comment.
struct BlogActions {
    let ref: DatabaseReference

    init(database: Database) {
        self.ref = database.reference()
    }

    /// Stores the profile at `/users/$uid`.
    func signUp(_ user: User) async throws {
        try await ref.child("users").child(user.uid).setValue(user.toDictionary())
    }

    /// `writeNewPost`: one push id, then one atomic multi-location update of the post and its
    /// copy under the author's posts.
    @discardableResult
    func writeNewPost(withUserID userID: String, username: String, title: String, body: String) async throws -> String {
        guard let key = ref.child("posts").childByAutoId().key else { return "" }
        let post = Post(uid: userID, author: username, title: title, body: body).toDictionary()
        let childUpdates = ["/posts/\(key)": post, "/user-posts/\(userID)/\(key)": post]
        try await ref.updateChildValues(childUpdates)
        return key
    }

    /// `onStarTapped`: toggles the star of `uid` on the post and on its copy, each in a
    /// transaction that keeps `starCount` equal to the number of stars. Returns the new star
    /// count of the post and whether `uid` now stars it (`nil` when there is no such post).
    @discardableResult
    func onStarTapped(postID: String, authorID: String, uid: String) async throws -> (starCount: Int, starred: Bool)? {
        let globalPostRef = ref.child("posts").child(postID)
        let userPostRef = ref.child("user-posts").child(authorID).child(postID)
        let result = try await Self.incrementStars(for: globalPostRef, uid: uid)
        try await Self.incrementStars(for: userPostRef, uid: uid)
        guard let post = Post(snapshot: result.snapshot) else { return nil }
        return (post.starCount, post.stars[uid] == true)
    }

    @discardableResult
    static func incrementStars(for ref: DatabaseReference, uid: String) async throws -> (committed: Bool, snapshot: DataSnapshot) {
        try await ref.runTransactionBlock { (currentData: MutableData) -> TransactionResult in
            if var post = currentData.value as? [String: Any] {
                var stars = post["stars"] as? [String: Bool] ?? [:]
                var starCount = post["starCount"] as? Int ?? 0
                if stars[uid] != nil {
                    // Unstar the post and remove self from stars
                    starCount -= 1
                    stars.removeValue(forKey: uid)
                } else {
                    // Star the post and add self to stars
                    starCount += 1
                    stars[uid] = true
                }
                post["starCount"] = starCount
                post["stars"] = stars
                // Set value and report transaction success
                currentData.value = post
                return TransactionResult.success(withValue: currentData)
            }
            // No post here (yet): leave it as it is.
            return TransactionResult.abort()
        }
    }

    /// Adds a comment under `/post-comments/$postId` with a push id; returns its key.
    @discardableResult
    func addComment(postID: String, uid: String, author: String, text: String) async throws -> String {
        let commentRef = ref.child("post-comments").child(postID).childByAutoId()
        try await commentRef.setValue(Comment(uid: uid, author: author, text: text).toDictionary())
        return commentRef.key ?? ""
    }

    /// Removes a comment.
    func removeComment(postID: String, commentID: String) async throws {
        try await ref.child("post-comments").child(postID).child(commentID).removeValue()
    }
}
