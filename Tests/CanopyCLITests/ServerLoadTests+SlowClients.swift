import CanopyTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

extension ServerLoadTests {
    /// Slowloris against `--idle-timeout 1 --body-timeout 2`: silent connections, request heads
    /// dribbled a byte every 100 ms, and bodies far slower than their Content-Length are all cut
    /// off by their timeout, none before it, and none of their writes lands; a stream client that never
    /// reads is disconnected once 4 MB wait for it; a quiet healthy stream (no events for longer
    /// than the idle timeout) stays open; other clients get answers throughout.
    @Test func slowSendersAndReaders() async throws {
        try await runOffThePool { checks in try Self.slowSendersAndReadersScenario(checks) }
    }

    private static func slowSendersAndReadersScenario(_ checks: Checks) throws {
        let idleTimeout = 1.0
        let bodyTimeout = 2.0
        let senders = scaled(12, minimum: 12)
        let dir = TemporaryDirectory()
        let server = try LoadServer(directory: dir.file("db"), ["--idle-timeout", "1", "--body-timeout", "2", "--keep-alive", "15"])
        defer { server.stop() }
        let writer = RawHTTPClient(port: server.port)
        checks.expect(try writer.request("PUT", "/probe.json", body: "1").status == 200)
        checks.expect(try writer.request("PUT", "/quiet.json", body: "0").status == 200)
        let baselineFiles = server.openFiles

        // A healthy stream that sees no event for longer than the idle timeout.
        let quiet = StreamFanIn(port: server.port)
        defer { quiet.closeAll() }
        try quiet.open(1, path: "/quiet.json")

        // A stream client that never reads, with a small receive buffer.
        let idle = try RawSocket(port: server.port, receiveBuffer: 4096)
        try idle.send("GET /big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        checks.expect(waitFor(seconds: 60) { idle.pendingBytes > 0 }, "the slow reader's stream started")

        let probe = LatencyProbe(port: server.port)
        var probeStopped = false
        defer { if !probeStopped { _ = probe.stop() } }

        /// Seconds from connecting until the server cut the connection, or nil if it did not
        /// within `giveUp` seconds (a guard against a hang, not a latency bound).
        let cutOff = Locked<[String: [Double?]]>([:])
        let bigWrites = Locked(0.0)
        let started = Date()
        try onThreads(senders * 3 + 1) { i in
            if i == senders * 3 {
                // Meanwhile: 12 MB of events for the stream that does not read.
                let big = String(repeating: "x", count: 512 << 10)
                let client = RawHTTPClient(port: server.port)
                let start = Date()
                for k in 0..<24 { _ = try? client.request("PUT", "/big/k\(k).json", body: "\"\(big)\"") }
                bigWrites.withLock { $0 = Date().timeIntervalSince(start) }
                return
            }
            let kind = ["silent", "head", "body"][i % 3]
            guard let socket = try? RawSocket(port: server.port, timeout: 30) else {
                cutOff.withLock { $0[kind, default: []].append(nil) }
                return
            }
            let connected = Date()
            // A head that takes longer to dribble (over 80 s) than the test waits: only the head
            // timeout can end it.
            let pad = String(repeating: "p", count: 800)
            let head = "PUT /slow/s\(i).json HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \(pad)\r\nContent-Length: 1000\r\n\r\n"
            var toSend: [UInt8] = []
            switch kind {
            case "head": toSend = Array(head.utf8)
            case "body":
                try? socket.send(head)
                toSend = Array(repeating: UInt8(ascii: "1"), count: 1000)
            default: break
            }
            var seconds: Double?
            let giveUp = 60.0
            while Date().timeIntervalSince(connected) < giveUp {
                if !toSend.isEmpty {
                    if (try? socket.send([toSend.removeFirst()])) == nil {
                        seconds = Date().timeIntervalSince(connected)
                        break
                    }
                }
                if socket.peerClosed(within: 0.1) {
                    seconds = Date().timeIntervalSince(connected)
                    break
                }
            }
            socket.close()
            cutOff.withLock { $0[kind, default: []].append(seconds) }
        }
        let elapsed = Date().timeIntervalSince(started)
        let times = cutOff.withLock { $0 }
        for kind in ["silent", "head", "body"] {
            let list = times[kind] ?? []
            checks.expect(list.count == senders, "\(kind): \(list.count) connections")
            let limit = kind == "body" ? bodyTimeout : idleTimeout
            for seconds in list {
                checks.expect(seconds != nil, "a \(kind) slow sender is cut off")
                if let seconds {
                    // Not before its timeout (how long after it is the benchmarks' business).
                    checks.expect(seconds >= limit * 0.9, "\(kind) cut off after \(seconds) s (timeout \(limit) s)")
                }
            }
            print(
                "ServerLoad.slowloris: \(kind) × \(list.count) cut off after \(list.compactMap { $0 }.map { String(format: "%.2f", $0) }.min() ?? "-")–\(list.compactMap { $0 }.map { String(format: "%.2f", $0) }.max() ?? "-") s"
            )
        }
        // No slow write landed.
        let slow = try writer.request("GET", "/slow.json")
        checks.expect(slow.status == 200 && slow.text == "null", "no slow write landed: \(slow.text.prefix(100))")

        // The stream that never reads was dropped: reading it now ends (EOF or reset) well
        // before the 12 MB were sent.
        var received = 0
        var outcome = "still open"
        idle.setTimeout(5)
        while true {
            do {
                let bytes = try idle.receive()
                if bytes.isEmpty {
                    outcome = "closed"
                    break
                }
                received += bytes.count
            } catch {
                if !"\(error)".contains("timed out") { outcome = "reset" }
                break
            }
        }
        checks.expect(outcome != "still open", "the server disconnected the stream that does not read")
        checks.expect(received < 12 << 20, "the slow reader got \(received) bytes, not all 12 MB")
        idle.close()

        // The quiet stream lived through more than twice the idle timeout and still gets events.
        checks.expect(elapsed > idleTimeout * 2)
        checks.expect(try writer.request("PUT", "/quiet.json", body: "1").status == 200)
        let quietStream = quiet.streams[0]
        let delivered = try quiet.pump(seconds: 60) { quietStream.events.count >= 2 }
        checks.expect(delivered && !quietStream.ended, "a quiet stream outlives the idle timeout")
        checks.expect(quietStream.events.last.map { $0.1 } == #"{"path":"/","data":1}"#)
        quiet.closeAll()

        let result = probe.stop()
        probeStopped = true
        print(
            "ServerLoad.slowloris: \(senders * 3) slow senders for \(String(format: "%.1f", elapsed)) s; 24 big writes took \(String(format: "%.1f", bigWrites.withLock { $0 })) s; slow reader dropped after \(received) bytes; server CPU \(String(format: "%.1f", ProcessStats.cpuSeconds(server.pid))) s; probe worst \(String(format: "%.3f", result.worst)) s over \(result.count) GETs"
        )
        checks.expect(result.failures.isEmpty, "\(result.failures.prefix(3))")
        writer.close()
        checks.expect(
            waitFor(seconds: 60) { server.openFiles <= baselineFiles - 1 },
            "slow connections are released: \(server.openFiles) open, baseline \(baselineFiles)")
    }
}

extension ServerLoadTests {
    /// `--slow-client-timeout`: a stream that stops reading half-way through a large initial value
    /// (far past the 4 MB event buffer, which no longer judges it) is cut off once it takes nothing
    /// for that long; a stream that reads gets the whole value.
    @Test func slowClientTimeoutCutsAStalledLargeListen() throws {
        let dir = TemporaryDirectory()
        #expect(try canopy(["serve", "--db", dir.file("db"), "--port", "0", "--slow-client-timeout", "0"]).status == 64)
        let server = try LoadServer(directory: dir.file("db"), ["--slow-client-timeout", "2"])
        defer { server.stop() }
        let writer = RawHTTPClient(port: server.port, timeout: 120)
        let child = String(repeating: "y", count: 1_000)
        let value = "{" + (0..<20_000).map { "\"k\($0)\":\"\(child)\"" }.joined(separator: ",") + "}"
        #expect(try writer.request("PUT", "/big.json?print=silent", body: value).status == 204)

        let stalled = try RawSocket(port: server.port, receiveBuffer: 4096, timeout: 60)
        defer { stalled.close() }
        try stalled.send("GET /big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        #expect(waitFor(seconds: 30) { stalled.pendingBytes > 0 }, "the stalled stream started")
        // It reads nothing more; a reader gets the whole 20 MB meanwhile.
        let reader = try RawSocket(port: server.port, timeout: 60)
        defer { reader.close() }
        try reader.send("GET /big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        var read = 0
        var tail: [UInt8] = []
        while !tail.elementsEqual("}\n\n\r\n".utf8) {
            let bytes = try reader.receive()
            guard !bytes.isEmpty else { break }
            read += bytes.count
            tail = Array((tail + bytes).suffix(5))
        }
        #expect(read > value.utf8.count, "the reading stream got the whole value")
        let cut = waitFor(seconds: 60) {
            (try? writer.request("GET", "/.metrics").text.contains(#"canopy_slow_clients_total{transport="sse"} 1"#)) == true
        }
        #expect(cut, "the stalled stream was cut off as a slow client")
        var received = 0
        while let bytes = try? stalled.receive(), !bytes.isEmpty { received += bytes.count }
        #expect(received < value.utf8.count, "the stalled stream ended before the whole value: \(received) bytes")
        writer.close()
    }

    /// Ten event streams read a 50 MB location at once: the server's peak RSS grows by less than
    /// six times the value (ten renderings would take ten times it), since the streams share one
    /// rendering and each holds only the slices on their way out. Measured: 2.7 to 3.3 times the
    /// value (128 to 160 MB for 48 MB), most of it the allocator keeping the streams' slices.
    @Test func tenListenersShareOneRendering() throws {
        let dir = TemporaryDirectory()
        let server = try LoadServer(directory: dir.file("db"))
        defer { server.stop() }
        let writer = RawHTTPClient(port: server.port, timeout: 120)
        defer { writer.close() }
        let child = String(repeating: "z", count: 1_000)
        let value = "{" + (0..<50_000).map { "\"k\($0)\":\"\(child)\"" }.joined(separator: ",") + "}"
        #expect(try writer.request("PUT", "/big.json?print=silent", body: value).status == 204)
        // The peak from here on (writing "5" to clear_refs resets VmHWM to the current RSS).
        let clearRefs = open("/proc/\(server.pid)/clear_refs", O_WRONLY)
        try #require(clearRefs >= 0, "could not open the server's clear_refs")
        let reset = write(clearRefs, "5", 1)
        close(clearRefs)
        try #require(reset == 1, "could not reset the server's peak RSS")
        let baseline = ProcessStats.peakResidentBytes(server.pid)
        let complete = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 10) { _ in
            guard let reader = try? RawSocket(port: server.port, timeout: 120) else { return }
            defer { reader.close() }
            guard (try? reader.send("GET /big.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")) != nil else {
                return
            }
            var read = 0
            var tail: [UInt8] = []
            while !tail.elementsEqual("}\n\n\r\n".utf8) {
                guard let bytes = try? reader.receive(), !bytes.isEmpty else { return }
                read += bytes.count
                tail = Array((tail + bytes).suffix(5))
            }
            if read > value.utf8.count { complete.withLock { $0 += 1 } }
        }
        #expect(complete.value == 10, "every stream got the whole value")
        let growth = ProcessStats.peakResidentBytes(server.pid) - baseline
        #expect(
            growth < 6 * value.utf8.count,
            "peak RSS grew by \(ProcessStats.megabytes(growth)) for a \(ProcessStats.megabytes(value.utf8.count)) value")
    }

    /// The timeout flags: negative values are usage errors; 0 turns a timeout off.
    @Test func timeoutFlagsAreValidated() throws {
        let dir = TemporaryDirectory()
        for flag in ["--idle-timeout", "--body-timeout"] {
            let r = try canopy(["serve", "--db", dir.file("db"), "--port", "0", flag, "-1"])
            #expect(r.status == 64, "\(r)")
            #expect(r.stderr.contains("must not be negative"), "\(r)")
        }
        let server = try LoadServer(directory: dir.file("db"), ["--idle-timeout", "0", "--body-timeout", "0"])
        defer { server.stop() }
        let client = RawHTTPClient(port: server.port)
        #expect(try client.request("PUT", "/x.json", body: "1").status == 200)
    }
}
