/// The kinds of event a view raises, in the order one write delivers them to a view:
/// removals, additions, moves, changes, then the value (see *Events*).
package enum EventType: Int, Sendable, CaseIterable, Comparable {
    case childRemoved
    case childAdded
    case childMoved
    case childChanged
    case value

    package static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.rawValue < rhs.rawValue }
}
