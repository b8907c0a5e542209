import Synchronization

/// One observer: an event type at a view, plus an opaque payload the library uses to call back.
///
/// Created on any thread, used by the engine on the loop thread. `isActive` may be cleared from
/// any thread; an inactive registration receives nothing more, even events already generated.
package final class EventRegistration: Sendable {
    package let id: UInt64
    package let type: EventType
    /// The library's callback box; the engine never looks inside. A class, so the library can
    /// get its type back with a cheap class cast on every delivery.
    package let payload: any AnyObject & Sendable
    private let active = Atomic<Bool>(true)

    package init(id: UInt64, type: EventType, payload: any AnyObject & Sendable) {
        self.id = id
        self.type = type
        self.payload = payload
    }

    package var isActive: Bool { self.active.load(ordering: .acquiring) }

    /// Marks the registration removed; returns whether it was active until now.
    @discardableResult
    package func deactivate() -> Bool {
        self.active.exchange(false, ordering: .acquiringAndReleasing)
    }
}
