import Testing

@testable import CanopyServer

/// How a node reads another node's advertised address: what the SDKs' redirect names, and where
/// forwarded writes connect.
@Suite("Advertised node addresses")
struct ClusterAddressTests {
    @Test(
        arguments: [
            ("http://127.0.0.2:9000", "127.0.0.2:9000", "127.0.0.2", 9000),
            ("http://node-1.internal:9100/", "node-1.internal:9100", "node-1.internal", 9100),
            ("http://[::1]:9001", "[::1]:9001", "::1", 9001),
            ("http://node.internal", "node.internal", "node.internal", 80),
            ("http://[fe80::1]", "[fe80::1]", "fe80::1", 80),
        ])
    func readsHostAndPort(advertised: String, authority: String, host: String, port: Int) {
        #expect(ClusterMembership.hostAndPort(of: advertised) == authority)
        let endpoint = ClusterMembership.endpoint(of: advertised)
        #expect(endpoint.host == host && endpoint.port == port)
    }
}
