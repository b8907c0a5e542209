import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

extension HTTPClient {
    /// A short description of a connection error ("connection refused").
    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let first = error.connectionErrors.first { return self.describe(first.error) }
            if let dns = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host) (\(dns))" }
            return "cannot connect to \(error.host):\(error.port)"
        }
        if let error = error as? IOError {
            return String(cString: strerror(error.errnoCode)).lowercased()
        }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: return "the connection timed out"
            case .ioOnClosedChannel, .alreadyClosed, .eof: return "the connection closed"
            default: break
            }
        }
        return "\(error)"
    }
}
