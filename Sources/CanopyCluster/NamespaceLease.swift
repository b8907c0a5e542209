/// A node's leadership of one namespace: the epoch it took it at, which every append and
/// checkpoint of that node names (the fencing token).
public struct NamespaceLease: Sendable, Hashable {
    public var namespace: String
    public var epoch: Int64
    public var node: Int32
}

/// Who leads a namespace, as PostgreSQL has it now.
public struct NamespaceLeader: Sendable, Hashable {
    public var node: Int32
    /// How clients reach the leader (its `--advertise`).
    public var advertise: String
    public var epoch: Int64
    /// Whether the leader's lease runs and its session holds its lock.
    public var alive: Bool
}
