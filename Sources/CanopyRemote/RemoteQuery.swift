import Canopy
import CanopyCore

/// A query at a location, as the key of its server listen.
struct QueryKey: Hashable {
    var path: DatabasePath
    var params: QueryParams

    /// What the server is asked for: the query with its limit doubled (10 more at least), so
    /// that the cache holds the children that move into the window when local writes remove
    /// some before the server's answer (the window then stays the embedded engine's).
    var serverParams: QueryParams {
        var params = self.params
        switch params.limit {
        case .first(let n)?: params.limit = .first(n + max(10, n))
        case .last(let n)?: params.limit = .last(n + max(10, n))
        case nil: break
        }
        return params
    }
}

/// A filtered query sent to the server as a tagged listen, shared by every observer (and
/// `keepSynced`) of that query: the server sends only the query's window, under the tag.
///
/// The cache holds the window's children at the query's location; several windows there add up
/// (each one's children are the server's data), and a plain listen at or above the location, once
/// it has data, makes the windows moot: its data is the whole of it.
final class RemoteQuery {
    let key: QueryKey
    /// The listen's tag, unique for the client's lifetime.
    let tag: Int64
    /// Observers and pins using it.
    var users = 0
    /// The request that asked for it on the current connection.
    var requestID: Int64?
    /// The server answered it at least once: the query's data is in the cache.
    var hasData = false
    /// Confirmed on the current connection.
    var isLive = false
    /// The server's data for the query at its location: the children in its window.
    var window: Node = .empty
    /// Whether ``window`` holds what the server sent (on this connection or an earlier one).
    var hasWindow = false
    /// Work waiting for the query's data (observers to register).
    var waiting: [(Result<Void, DatabaseError>) -> Void] = []
    /// Observers registered through it, so a refusal can cancel them.
    var registrations: [EventRegistration] = []
    /// The server refused the query with its margin (a rule on `query.limitToFirst`, say): it is
    /// asked for exactly, and a window edge emptied by local removals fills once the server answers.
    var withoutMargin = false

    /// What the server is asked for.
    var serverParams: QueryParams { self.withoutMargin ? self.key.params : self.key.serverParams }

    init(key: QueryKey, tag: Int64) {
        self.key = key
        self.tag = tag
    }
}
