import CanopyCore
import Dispatch
import Foundation

/// Converts the entries of a large multi-path update (`updateChildValues` of thousands of
/// children) on several threads: each takes a contiguous share of the dictionary's entries and
/// converts them with ``FastAnyConverter``. It only reads the values, as the sequential path does.
///
/// All or nothing: when any entry is not a plain child (a key with `/`, `.priority`, an unusual
/// value, anything invalid) it returns `nil`, and the caller converts the whole update
/// sequentially, so errors are reported exactly as before (the first one in dictionary order).
enum BatchConverter {
    /// Updates with fewer entries are converted on the calling thread only.
    static let threshold = 4096

    /// The entries (one per dictionary entry, in dictionary order), or `nil`.
    static func entries(_ values: [AnyHashable: Any], at location: PathBudget) -> [WriteOperation.Entry]? {
        let n = values.count
        let workers = Swift.max(1, Swift.min(ProcessInfo.processInfo.activeProcessorCount, 4, n / (Self.threshold / 2)))
        guard workers > 1, location.fits else { return nil }
        let job = Job(values: values, location: location, workers: workers)
        defer { job.deallocate() }
        DispatchQueue.concurrentPerform(iterations: workers) { w in job.run(worker: w) }
        return job.collect()
    }

    /// The shared state of one conversion: the input, read by every worker, and the output slots,
    /// each written by the one worker whose share it is in.
    // @unchecked Sendable: workers only read `values` and write disjoint slots and counters; the
    // caller reads them after `concurrentPerform` has returned.
    private struct Job: @unchecked Sendable {
        let values: [AnyHashable: Any]
        let location: PathBudget
        let workers: Int
        let slots: UnsafeMutablePointer<WriteOperation.Entry>
        /// Worker `w` initializes the first `done[w]` slots of its share.
        let done: UnsafeMutablePointer<Int>

        init(values: [AnyHashable: Any], location: PathBudget, workers: Int) {
            self.values = values
            self.location = location
            self.workers = workers
            self.slots = .allocate(capacity: values.count)
            self.done = .allocate(capacity: workers)
            self.done.initialize(repeating: 0, count: workers)
        }

        func share(_ w: Int) -> Range<Int> { (self.values.count * w / self.workers)..<(self.values.count * (w + 1) / self.workers) }

        func run(worker w: Int) {
            let range = self.share(w)
            var converted = 0
            defer { self.done[w] = converted }
            var index = self.values.index(self.values.startIndex, offsetBy: range.lowerBound)
            for i in range {
                let (rawKey, rawValue) = self.values[index]
                self.values.formIndex(after: &index)
                guard let key = FastAnyConverter.string(rawKey), let childKey = ChildKey(validating: key),
                    let node = BatchConverter.node(rawValue, location: self.location, key: key)
                else { return }
                (self.slots + i).initialize(to: WriteOperation.Entry(path: [childKey], value: WriteValue(node: node)))
                converted += 1
            }
        }

        /// The entries if every worker converted its whole share; else drops what they made.
        func collect() -> [WriteOperation.Entry]? {
            guard (0..<self.workers).allSatisfy({ self.done[$0] == self.share($0).count }) else {
                for w in 0..<self.workers { (self.slots + self.share(w).lowerBound).deinitialize(count: self.done[w]) }
                return nil
            }
            var entries: [WriteOperation.Entry] = []
            entries.reserveCapacity(self.values.count)
            for i in 0..<self.values.count { entries.append((self.slots + i).move()) }
            return entries
        }

        func deallocate() {
            self.slots.deallocate()
            self.done.deallocate()
        }
    }

    /// The node for a plain value at the child `key`, or `nil` when it needs the exact path.
    static func node(_ value: Any, location: PathBudget, key: String) -> Node? {
        var budget = location
        guard (try? budget.push(key.utf8.count)) != nil else { return nil }
        var converter = FastAnyConverter(budget: budget)
        return try? converter.node(value)
    }
}
