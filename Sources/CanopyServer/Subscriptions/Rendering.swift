import CanopyCore

/// A long message rendered once (a listen's initial value), shared by every connection it goes to
/// until they all sent it.
final class Rendering: Sendable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }
}

/// The renderings of the initial values of listens, by location and renderer (wire format),
/// reused by the listens on the same location that start before the next write: ten clients
/// listening to one large location at once share one rendering. Held weakly: a rendering lives only while some connection still sends it.
/// Used on the database's loop thread; the hub clears it on every write.
struct Renderings {
    private struct Entry {
        weak var rendering: Rendering?
    }

    private struct Key: Hashable {
        var location: DatabasePath
        var renderer: ObjectIdentifier
    }

    private var entries: [Key: Entry] = [:]

    /// Messages shorter than this are rendered for each listen (cheap, and not worth keeping).
    static let sharedLimit = 64 << 10

    /// The rendering for `location` by `renderer`, the cached one if it is still alive, else
    /// `render()`'s.
    mutating func rendering(at location: DatabasePath, renderer: any SubscriptionRenderer, render: () -> [UInt8]) -> Rendering {
        let key = Key(location: location, renderer: ObjectIdentifier(renderer))
        if let rendering = self.entries[key]?.rendering { return rendering }
        let rendering = Rendering(render())
        if rendering.bytes.count >= Self.sharedLimit {
            self.entries[key] = Entry(rendering: rendering)
        }
        return rendering
    }

    /// Forgets every rendering: the data changed.
    mutating func removeAll() {
        if !self.entries.isEmpty { self.entries.removeAll() }
    }
}
