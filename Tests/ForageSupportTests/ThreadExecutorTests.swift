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

  /// Foundation on Linux applies `Thread.current.name = …` only once the
  /// starting thread has stored the new thread's handle, after
  /// `pthread_create` returned: a thread that ran first kept its parent's
  /// name. The name is now set with `pthread_setname_np` by the thread
  /// itself, before its first job, so every executor's first job sees it.
  @Test func test_everyExecutorsThread_isNamedBeforeItsFirstJob() async {
    var unnamed: [String] = []
    for i in 0..<300 {
      let name = "forage-name-\(i)"
      let log = Log(name: name)
      let seen = await log.add(i)
      if seen != name { unnamed.append("\(name): \(seen ?? "nil")") }
    }
    #expect(unnamed.isEmpty, "threads that ran their first job under another name: \(unnamed.prefix(5))")
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
