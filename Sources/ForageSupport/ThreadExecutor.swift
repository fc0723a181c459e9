import Foundation

/// A serial executor with a thread of its own, for an actor whose work
/// blocks: a database actor that waits for its server's answer (libpq's
/// calls block until the reply arrives) would otherwise hold one of Swift's
/// cooperative threads, of which there is one per core, and the parsing
/// and fetching of the rest of the job would wait behind it.
///
///     actor Store {
///       private let executor = ThreadExecutor(name: "forage-store")
///       nonisolated var unownedExecutor: UnownedSerialExecutor {
///         executor.asUnownedSerialExecutor()
///       }
///     }
///
/// Jobs run one at a time in the order they were enqueued. The thread ends
/// when the executor is released (after its actor: each job holds it).
package final class ThreadExecutor: SerialExecutor, @unchecked Sendable {
  /// The jobs waiting, shared with the thread (which must not keep the
  /// executor itself alive).
  private final class Queue: @unchecked Sendable {
    let condition = NSCondition()
    var jobs: [UnownedJob] = []
    var head = 0
    var stopped = false
  }

  private let queue = Queue()

  /// Starts the executor's thread, named `name` (seen in debuggers and
  /// `top -H`; cut to 15 characters on Linux).
  package init(name: String) {
    let queue = self.queue
    // Unowned: a job exists only while its actor, and so this executor, does.
    let executor = UnownedSerialExecutor(ordinary: self)
    let thread = Thread {
      // Named from inside: set before `start()` the name was not applied on
      // Linux, where a thread's name is at most 15 bytes (a longer one is
      // refused, and the thread keeps the name of the one that started it).
      Thread.current.name = String(name.prefix(15))
      while true {
        queue.condition.lock()
        while queue.head == queue.jobs.count && !queue.stopped { queue.condition.wait() }
        if queue.head == queue.jobs.count {
          queue.condition.unlock()
          return
        }
        let job = queue.jobs[queue.head]
        queue.head += 1
        if queue.head == queue.jobs.count {
          queue.jobs.removeAll(keepingCapacity: true)
          queue.head = 0
        }
        queue.condition.unlock()
        job.runSynchronously(on: executor)
      }
    }
    thread.start()
  }

  deinit {
    queue.condition.lock()
    queue.stopped = true
    queue.condition.signal()
    queue.condition.unlock()
  }

  /// Queues `job` to run on the executor's thread.
  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.condition.lock()
    queue.jobs.append(job)
    queue.condition.signal()
    queue.condition.unlock()
  }

  /// This executor, as actors name theirs.
  package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}
