/// The kinds of event a view raises, in the order one write delivers them (spec §6.3).
package enum EventType: Int, Sendable, CaseIterable, Comparable {
    case childRemoved
    case childAdded
    case childMoved
    case childChanged
    case value

    package static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.rawValue < rhs.rawValue }
}
