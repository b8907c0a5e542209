import CanopyCore
import CanopyWire
import NIOCore

/// Renders SDK data pushes (`d`, `m`) at the topic's location, untagged: a tagged query's
/// subscriber appends its tag (``tagged(_:tag:)``).
final class WireRenderer: SubscriptionRenderer {
    static let shared = WireRenderer()

    func initial(_ snapshot: SubscriptionSnapshot, of topic: Topic, tag: Int64?) -> [UInt8] {
        switch snapshot {
        case .node(let node):
            ServerMessage.put(path: topic.location, tag: tag) { WireJSON.append(node, to: &$0) }
        case .aggregate(let value):
            ServerMessage.put(path: topic.location, data: JSONWriter.bytes(value), tag: tag)
        }
    }

    func render(_ update: SubscriptionUpdate, of topic: Topic) -> ByteBuffer? {
        let push: [UInt8]? =
            switch update {
            case .write(let write, let root):
                write.change(at: topic.location, root: root, priorities: true).map { WireJSON.push($0, at: topic.location, tag: nil) }
            case .window(let change):
                change.locationChange.map { WireJSON.push($0, at: topic.location, tag: nil) }
            case .aggregate(let value):
                ServerMessage.put(path: topic.location, data: JSONWriter.bytes(value))
            }
        return push.map { ByteBuffer(bytes: $0) }
    }

    /// An untagged push with `tag` added (before its closing `}}}`).
    static func tagged(_ push: ByteBuffer, tag: Int64) -> [UInt8] {
        var message = Array(push.readableBytesView.dropLast(3))
        message += #","t":"#.utf8
        JSONWriter.appendInt(tag, to: &message)
        message += "}}}".utf8
        return message
    }
}
