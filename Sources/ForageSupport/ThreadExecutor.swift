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
    let threadName = Self.threadName(name)
    let thread = Thread {
      // Named by the thread itself, with pthread, before its first job.
      // Foundation's `Thread.current.name = …` (Linux) is applied only once
      // the starting thread has stored the new thread's handle, after
      // `pthread_create` returned: a thread that ran first kept the name of
      // the one that started it. Set before `start()`, it is not applied.
      #if canImport(Darwin)
      _ = pthread_setname_np(threadName)
      #else
      _ = Self.setName?(pthread_self(), threadName)
      #endif
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

  #if !canImport(Darwin)
  /// `int pthread_setname_np(pthread_t, const char *)`, which Swift's Glibc
  /// module does not declare (it is a GNU extension).
  private static let setName: (@convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32)? = {
    guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return nil }
    return unsafeBitCast(address, to: (@convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32).self)
  }()
  #endif

  /// `name` cut to the 15 bytes a Linux thread name holds (a longer one is
  /// refused), at a character boundary.
  static func threadName(_ name: String) -> String {
    var out = ""
    for c in name {
      if out.utf8.count + c.utf8.count > 15 { break }
      out.append(c)
    }
    return out
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
