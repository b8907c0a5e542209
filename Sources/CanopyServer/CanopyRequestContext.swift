public import Hummingbird
import NIOCore

/// The request context: Hummingbird's, plus the connection (to drop a stream's client).
public struct CanopyRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    let channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
