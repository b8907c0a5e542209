import CanopyCluster

/// A namespace this node follows (`--replicas`): the log it applies and the channel its writes
/// take to the leader (the DocC article *Cluster*, section *Replicas*).
struct FollowerBinding: Sendable {
    let follower: LogFollower
    let forwarder: WriteForwarder
    let store: ClusterStore
    /// The node's registration when it started following (a node registered again has missed
    /// part of the log and its clients' onDisconnect writes ran: it stops following).
    let node: Int32
}
