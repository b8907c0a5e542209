import Canopy
import CanopyServer
import Foundation
import Testing

/// `GET /.metrics`: Prometheus' text format, counts that follow what the server did, and the
/// same guard as the other administrative endpoints. (The SDK counters are checked by the
/// WebSocket protocol client, which parses the page with prometheus_client.)
@Suite("Metrics")
struct MetricsTests {
    /// The samples of a metrics page: `name{labels}` → value.
    static func samples(_ text: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw TestFailure("not a sample line: \(line)")
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    /// Scrapes `/.metrics` over loopback.
    static func scrape(_ port: Int, headers: [(String, String)] = []) async throws -> [String: Double] {
        let reply = try await StreamTests.request(port, "GET", "/.metrics", headers: headers)
        #expect(reply.status == 200, "\(reply.body)")
        return try Self.samples(reply.body)
    }

    @Test("requests by method and status class, streams opened and open, namespaces")
    func counts() async throws {
        try await withLiveServer(makeServer()) { port in
            let before = try await Self.scrape(port)
            #expect(before[#"canopy_http_requests_total{method="PUT",status="2xx"}"#] == 0)
            #expect(before["canopy_event_streams_opened_total"] == 0)
            #expect(before[#"canopy_build_info{version="\#(CanopyVersion.current)"}"#] == 1)
            for i in 0..<3 { #expect(try await StreamTests.request(port, "PUT", "/m/\(i).json", "\(i)").status == 200) }
            #expect(try await StreamTests.request(port, "GET", "/m.json").status == 200)
            #expect(try await StreamTests.request(port, "GET", "/m.json?orderBy=1").status == 400)
            #expect(try await StreamTests.request(port, "PATCH", "/m.json", "[1]").status == 400)
            let stream = try await EventStreamClient.open(port: port, "/m.json")
            #expect(try await stream.next()?.name == "put")
            let after = try await Self.scrape(port)
            #expect(after[#"canopy_http_requests_total{method="PUT",status="2xx"}"#] == 3)
            // The first scrape, the read and the stream (counted once its response began).
            #expect(after[#"canopy_http_requests_total{method="GET",status="2xx"}"#] == 3)
            #expect(after[#"canopy_http_requests_total{method="GET",status="4xx"}"#] == 1)
            #expect(after[#"canopy_http_requests_total{method="PATCH",status="4xx"}"#] == 1)
            #expect(after[#"canopy_http_requests_total{method="DELETE",status="2xx"}"#] == 0)
            #expect(after["canopy_event_streams_opened_total"] == 1)
            #expect(after["canopy_event_streams"] == 1)
            #expect(after["canopy_namespaces"] == 1)
            #expect(after["canopy_websocket_connections"] == 0)
            #expect((after["process_resident_memory_bytes"] ?? 0) > 1_000_000)
            #expect((after["process_open_fds"] ?? 0) >= 3)
            let put = try await StreamTests.request(port, "PUT", "/.metrics", "1")
            #expect(put.status == 405 && put.body.contains("\"error\""))
            await stream.connection.close()
        }
    }

    @Test("a guarded server shows its metrics to its administrator only")
    func guarded() async throws {
        try await withLiveServer(makeServer { $0.authToken = "s3cret" }) { port in
            let anonymous = try await StreamTests.request(port, "GET", "/.metrics")
            #expect(anonymous.status == 401 || anonymous.status == 403)
            #expect(anonymous.body.contains("\"error\"") && !anonymous.body.contains("canopy_"))
            #expect(try await StreamTests.request(port, "GET", "/.metrics?auth=wrong").status == 401)
            let samples = try await Self.scrape(port, headers: [("Authorization", "Bearer s3cret")])
            // The two refused scrapes were counted.
            #expect(samples[#"canopy_http_requests_total{method="GET",status="4xx"}"#] == 2)
        }
    }
}
