import CanopyCore

/// What a subscriber follows: the data of a location, the window of a filtered query, or a live
/// aggregate. Subscribers of one topic share what the hub renders for it.
struct Topic: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// The location's whole data.
        case location
        /// The window of a filtered query at the location.
        case query(QueryParams)
        /// An aggregate over the range of a filtered query (`nil`: the whole location).
        case aggregate(QueryParams?, AggregateRequest)
    }

    var location: DatabasePath
    var kind: Kind

    /// The query the rules judge a read of the topic by (`nil`: the location's whole data).
    var query: QueryParams? {
        switch self.kind {
        case .location: nil
        case .query(let params): params
        case .aggregate(let params, _): params
        }
    }
}

/// One subscription of a subscriber: a topic, and the tag the subscriber's client names it by
/// (the SDKs' tagged queries; `nil` for an untagged one), echoed in what it is sent.
struct Subscription: Hashable, Sendable {
    var topic: Topic
    var tag: Int64?
}
