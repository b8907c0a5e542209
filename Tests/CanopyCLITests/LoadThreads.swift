import CanopyTestSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Waits until `condition` holds, checking every `interval` seconds; false past `seconds`.
func waitFor(seconds: Double, interval: Double = 0.02, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if try condition() { return true }
        if Date() >= deadline { return false }
        usleep(UInt32(interval * 1_000_000))
    }
}

/// Runs `body(i)` for `i` in `0..<count`, each on its own thread; returns when all ended (or
/// throws after `seconds`).
func onThreads(_ count: Int, stackSize: Int = 512 << 10, seconds: Double = 600, _ body: @escaping @Sendable (Int) -> Void) throws {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.stackSize = stackSize
        thread.start()
    }
    try group.wait(for: "\(count) load threads to end", seconds: seconds)
}

/// How much longer/larger the load tests run: `CANOPY_LOAD_SCALE` (default 1).
let loadScale: Double = ProcessInfo.processInfo.environment["CANOPY_LOAD_SCALE"].flatMap(Double.init).map { max(0.1, $0) } ?? 1

func scaled(_ count: Int, minimum: Int = 1) -> Int { max(minimum, Int((Double(count) * loadScale).rounded())) }
