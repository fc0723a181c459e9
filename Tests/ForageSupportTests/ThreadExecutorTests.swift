import Foundation
import Testing
import ForageSupport

/// An actor on a `ThreadExecutor` runs on that thread, one job at a time,
/// and the thread ends when the actor is gone.
@Suite struct ThreadExecutorTests {
  actor Log {
    let executor: ThreadExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    var entries: [Int] = []
    var inside = 0
    var overlapped = false

    init(name: String) { executor = ThreadExecutor(name: name) }

    /// Appends `i` after a blocking pause, noting any other job running meanwhile.
    func add(_ i: Int) -> String? {
      inside += 1
      if inside > 1 { overlapped = true }
      usleep(200)
      entries.append(i)
      inside -= 1
      return Thread.current.name
    }
  }

  @Test func test_jobsRunOnTheExecutorsThread_oneAtATime() async {
    let log = Log(name: "forage-test-executor-long")
    let names = await withTaskGroup(of: String?.self) { group in
      for i in 0..<200 { group.addTask { await log.add(i) } }
      return await group.reduce(into: Set<String?>()) { $0.insert($1) }
    }
    #expect(names == ["forage-test-exe"], "the name, cut to 15 characters")
    #expect(await log.entries.sorted() == Array(0..<200))
    #expect(await !log.overlapped)
  }

  @Test func test_theExecutorIsReleasedWithItsActor() async {
    weak var executor: ThreadExecutor?
    do {
      let log = Log(name: "forage-test-released")
      executor = log.executor
      _ = await log.add(1)
    }
    // The last job's bookkeeping may hold it a moment longer.
    for _ in 0..<200 where executor != nil { try? await Task.sleep(for: .milliseconds(5)) }
    #expect(executor == nil)
  }
}
