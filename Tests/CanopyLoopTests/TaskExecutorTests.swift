import CanopyLoop
import Foundation
import Testing

@Suite("Tasks on threads of Canopy's own (ThreadPoolTaskExecutor)")
struct TaskExecutorTests {
    static let pool = ThreadPoolTaskExecutor(threads: 2, name: "executor-test")

    /// The calling thread's name, as the kernel keeps it.
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }

    @Test("a task that prefers the pool runs on its threads, and so do its child tasks, across suspensions")
    func tasksRunOnThePool() async {
        let names = await Task(executorPreference: Self.pool) {
            var names = [Self.threadName()]
            await Task.yield()
            names.append(Self.threadName())
            let children = await withTaskGroup(of: String.self) { group in
                for _ in 0..<8 { group.addTask { Self.threadName() } }
                return await group.reduce(into: [String]()) { $0.append($1) }
            }
            return names + children
        }.value
        #expect(names.count == 10)
        #expect(names.allSatisfy { $0 == "executor-test" }, "\(names)")
        #expect(Self.threadName() != "executor-test")
    }

    @Test("every job of many tasks runs, each task's steps in order")
    func manyTasks() async {
        let results = await withTaskGroup(of: [Int].self) { group in
            for task in 0..<200 {
                group.addTask(executorPreference: Self.pool) {
                    var steps: [Int] = []
                    for step in 0..<10 {
                        steps.append(task * 10 + step)
                        await Task.yield()
                    }
                    return steps
                }
            }
            return await group.reduce(into: [[Int]]()) { $0.append($1) }
        }
        #expect(results.count == 200)
        #expect(results.allSatisfy { $0 == Array($0[0]..<($0[0] + 10)) && $0[0] % 10 == 0 })
        #expect(Set(results.map { $0[0] }) == Set(stride(from: 0, to: 2000, by: 10)))
    }
}
