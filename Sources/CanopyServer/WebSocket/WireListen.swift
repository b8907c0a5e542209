import CanopyCore

/// One listen of an SDK connection, as it names it in `q` and `n`.
///
/// A tagged listen on a filtered query is a subscription to that query's window, under its tag;
/// any other (no tag, or a query that filters nothing) is served as the location's whole data,
/// one subscription for all of the connection's such listens on the location.
struct WireListen: Hashable, Sendable {
    var location: DatabasePath
    var query: QueryParams?
    var tag: Int64?

    /// The hub subscription that serves it.
    var subscription: Subscription {
        if let tag, let params = self.query, params.isFiltered {
            return Subscription(topic: Topic(location: self.location, kind: .query(params)), tag: tag)
        }
        return Subscription(topic: Topic(location: self.location, kind: .location))
    }
}
