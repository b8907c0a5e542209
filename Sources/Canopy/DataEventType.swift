/// The kinds of event an observer can listen for (Firebase's `DataEventType`).
public enum DataEventType: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// A child was added (and, on registration, once per existing child).
    case childAdded = 0
    /// A child was removed; the snapshot holds its last data.
    case childRemoved = 1
    /// A child's data changed (anywhere below it).
    case childChanged = 2
    /// A child's position in the observed order changed.
    case childMoved = 3
    /// The data at the location changed (and, on registration, its current value).
    case value = 4

    public var description: String {
        switch self {
        case .childAdded: return "child_added"
        case .childRemoved: return "child_removed"
        case .childChanged: return "child_changed"
        case .childMoved: return "child_moved"
        case .value: return "value"
        }
    }
}

/// Identifies an observer for ``DatabaseQuery/removeObserver(withHandle:)``.
public typealias DatabaseHandle = UInt
