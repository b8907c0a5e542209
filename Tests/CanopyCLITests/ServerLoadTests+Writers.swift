import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServerLoadTests {
    /// 64 connections writing at once (PUT, PATCH and POST in turn): every acknowledged write is
    /// in the database afterwards, exactly, and readers get answers throughout.
    @Test func writerFlood() async throws {
        try await runOffThePool { checks in try Self.writerFloodScenario(checks) }
    }

    private static func writerFloodScenario(_ checks: Checks) throws {
        let connections = 64
        let perConnection = scaled(24)
        let dir = TemporaryDirectory()
        let server = try LoadServer(directory: dir.file("db"))
        defer { server.stop() }
        let setup = RawHTTPClient(port: server.port)
        checks.expect(try setup.request("PUT", "/probe.json", body: "1").status == 200)
        let probe = LatencyProbe(port: server.port, path: "/flood/c0.json?shallow=true")
        var probeStopped = false
        defer { if !probeStopped { _ = probe.stop() } }

        /// What each connection had acknowledged: puts (key → value), patches (key → value),
        /// pushes (push id → value); and failures.
        let acknowledged = Locked<(puts: [String: Int], patches: [String: Int], pushes: [String: Int], failures: [String])>(
            ([:], [:], [:], []))
        let start = Date()
        try onThreads(connections) { c in
            let client = RawHTTPClient(port: server.port)
            defer { client.close() }
            for i in 0..<perConnection {
                let value = c * 100_000 + i
                do {
                    switch i % 3 {
                    case 0:
                        let response = try client.request("PUT", "/flood/c\(c)/puts/p\(i).json", body: "\(value)")
                        if response.status == 200 && response.text == "\(value)" {
                            acknowledged.withLock { $0.puts["c\(c)/puts/p\(i)"] = value }
                        } else {
                            acknowledged.withLock { $0.failures.append("PUT \(response.status) \(response.text)") }
                        }
                    case 1:
                        let response = try client.request("PATCH", "/flood/c\(c).json", body: #"{"patches/q\#(i)": \#(value)}"#)
                        if response.status == 200 {
                            acknowledged.withLock { $0.patches["c\(c)/patches/q\(i)"] = value }
                        } else {
                            acknowledged.withLock { $0.failures.append("PATCH \(response.status) \(response.text)") }
                        }
                    default:
                        let response = try client.request("POST", "/flood/c\(c)/pushes.json", body: "\(value)")
                        let name = (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: String])?["name"]
                        if response.status == 200, let name {
                            acknowledged.withLock { $0.pushes["c\(c)/pushes/\(name)"] = value }
                        } else {
                            acknowledged.withLock { $0.failures.append("POST \(response.status) \(response.text)") }
                        }
                    }
                } catch {
                    acknowledged.withLock { $0.failures.append("\(error)") }
                }
            }
        }
        let elapsed = Date().timeIntervalSince(start)
        let result = probe.stop()
        probeStopped = true
        let acks = acknowledged.withLock { $0 }
        let total = acks.puts.count + acks.patches.count + acks.pushes.count
        checks.expect(acks.failures.isEmpty, "\(acks.failures.count) failed: \(acks.failures.prefix(3))")
        checks.expect(total == connections * perConnection)

        // Every acknowledged write is there, with its value; nothing else is.
        let dump = try setup.request("GET", "/flood.json")
        checks.expect(dump.status == 200)
        guard let tree = try JSONSerialization.jsonObject(with: Data(dump.body)) as? [String: Any] else {
            throw ToolFailure("not an object: \(dump.text.prefix(200))")
        }
        var found = 0
        var wrong: [String] = []
        for (path, value) in acks.puts.merging(acks.patches, uniquingKeysWith: { a, _ in a }).merging(
            acks.pushes, uniquingKeysWith: { a, _ in a })
        {
            var node: Any? = tree
            for key in path.split(separator: "/") { node = (node as? [String: Any])?[String(key)] }
            if (node as? Int) == value { found += 1 } else { wrong.append("\(path): \(String(describing: node))") }
        }
        var leaves = 0
        for case let connection as [String: Any] in tree.values {
            for case let group as [String: Any] in connection.values { leaves += group.count }
        }
        print(
            "ServerLoad.flood: \(connections) connections × \(perConnection) writes = \(total) acknowledged in \(String(format: "%.2f", elapsed)) s (\(Int(Double(total) / elapsed)) writes/s), \(found) verified; probe worst \(String(format: "%.3f", result.worst)) s over \(result.count) GETs"
        )
        checks.expect(wrong.isEmpty, "\(wrong.count) acknowledged writes missing or wrong: \(wrong.prefix(3))")
        checks.expect(found == total)
        checks.expect(leaves == total, "no write landed twice or elsewhere")
        checks.expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
        checks.expect(result.count > 0)
    }

    /// SIGKILL `canopy serve --db DIR` while 8 writers write; restart on the same directory:
    /// every write acknowledged before the kill (in any round) is there with its exact value,
    /// and the server takes writes again. Three rounds.
    @Test func restartUnderLoad() async throws {
        try await runOffThePool { checks in try Self.restartUnderLoadScenario(checks) }
    }

    private static func restartUnderLoadScenario(_ checks: Checks) throws {
        let rounds = scaled(3, minimum: 3)
        let writers = 8
        let acksBeforeKill = scaled(150)
        let dir = TemporaryDirectory()
        var acknowledged: [String: String] = [:]
        for round in 0..<rounds {
            let server = try LoadServer(directory: dir.file("db"))
            defer { server.kill() }
            // What survived the previous kill.
            if round > 0 { try Self.verify(checks, acknowledged, port: server.port, round: round) }

            let acks = Locked<[String: String]>([:])
            let errors = Locked<[String]>([])
            let killed = Locked(false)
            try onThreads(writers + 1) { w in
                if w == writers {
                    // The killer: waits for enough acknowledgements, then SIGKILL mid-stream.
                    _ = waitFor(seconds: 30, interval: 0.005) { acks.withLock { $0.count } >= acksBeforeKill }
                    killed.withLock { $0 = true }
                    server.kill()
                    return
                }
                let client = RawHTTPClient(port: server.port, timeout: 5)
                var seq = 0
                while !killed.withLock({ $0 }) {
                    seq += 1
                    let key = "r\(round)/w\(w)/s\(seq)"
                    let value = #"{"round":\#(round),"seq":\#(seq),"text":"w\#(w)-\#(seq)","writer":\#(w)}"#
                    do {
                        let response = try client.request("PUT", "/restart/\(key).json", body: value)
                        if response.status == 200 {
                            acks.withLock { $0[key] = value }
                        } else {
                            errors.withLock { $0.append("\(response.status) \(response.text)") }
                        }
                    } catch {
                        // Killed mid-request: the write may or may not be there; not acknowledged.
                        if !killed.withLock({ $0 }) { errors.withLock { $0.append("\(error)") } }
                        break
                    }
                }
            }
            let roundAcks = acks.withLock { $0 }
            checks.expect(errors.withLock { $0 }.isEmpty, "writes failed before the kill: \(errors.withLock { $0 }.prefix(3))")
            checks.expect(roundAcks.count >= acksBeforeKill)
            acknowledged.merge(roundAcks) { a, _ in a }
            print(
                "ServerLoad.restart: round \(round): \(roundAcks.count) writes acknowledged before SIGKILL (\(acknowledged.count) in all)")
        }
        // After the last kill: everything is there, and the server writes again.
        let server = try LoadServer(directory: dir.file("db"))
        defer { server.stop() }
        try Self.verify(checks, acknowledged, port: server.port, round: rounds)
    }

    /// Checks that every acknowledged write is present with its value, and that the server
    /// accepts a write.
    private static func verify(_ checks: Checks, _ acknowledged: [String: String], port: Int, round: Int) throws {
        let client = RawHTTPClient(port: port)
        let dump = try client.request("GET", "/restart.json")
        checks.expect(dump.status == 200)
        let tree = try JSONSerialization.jsonObject(with: Data(dump.body), options: [.fragmentsAllowed]) as? [String: Any] ?? [:]
        var missing: [String] = []
        for (key, value) in acknowledged {
            var node: Any? = tree
            for part in key.split(separator: "/") { node = (node as? [String: Any])?[String(part)] }
            let expected = try JSONSerialization.jsonObject(with: Data(value.utf8)) as? NSDictionary
            if let node = node as? NSDictionary, let expected, node == expected { continue }
            missing.append("\(key): \(String(describing: node))")
        }
        print(
            "ServerLoad.restart: after restart \(round): \(acknowledged.count - missing.count) of \(acknowledged.count) acknowledged writes present"
        )
        checks.expect(
            missing.isEmpty, "after restart \(round): \(missing.count) acknowledged writes missing or wrong: \(missing.prefix(3))")
        let write = try client.request("PUT", "/restart/after\(round).json", body: #""ok""#)
        checks.expect(write.status == 200)
        checks.expect(try client.request("GET", "/restart/after\(round).json").text == #""ok""#)
    }
}
