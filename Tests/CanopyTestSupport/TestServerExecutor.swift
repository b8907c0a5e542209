import CanopyLoop

/// The executor the tests' in-process servers run on, with threads of its own: Swift concurrency's
/// default executor has as many threads as the machine has cores (two in CI), and a synchronous
/// test holds one for as long as it runs, which must not stall a server other tests are talking to.
public let testServerExecutor: any TaskExecutor = ThreadPoolTaskExecutor(threads: 4, name: "test-server")
