import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes a `command` channel's program die with Forage, even when Forage is
/// killed with SIGKILL (and so runs no code of its own to stop it).
///
/// Linux's `PR_SET_PDEATHSIG` has the kernel send a signal to a process
/// when its parent dies, but it must be set in the child between fork and
/// exec, where `posix_spawn` offers no step. util-linux's `setpriv` (part of
/// every Debian system: util-linux is essential) is that step:
/// `setpriv --pdeathsig KILL -- PROGRAM ARGS…` sets it, then execs the
/// program, which keeps it. Two conditions make it hold:
///
/// - The "parent" the kernel watches is the *thread* that spawned the child,
///   not the process: a Swift concurrency or dispatch worker thread the
///   runtime retires would kill a healthy program. So programs are spawned
///   on one thread that lives as long as the process (``perform(_:)``).
/// - `setpriv` must know `--pdeathsig` (util-linux 2.33 and later); this is
///   checked once, by running it.
///
/// What it does not cover: only the program itself gets the signal, not
/// the programs it started (a shell's background jobs are reparented to
/// init and run on); and a Forage killed in the microseconds between the
/// spawn and `setpriv`'s `prctl` leaves the program running. Elsewhere (no
/// `setpriv`, macOS) programs are spawned directly, as before.
enum ParentDeath {
  /// The `setpriv` that knows `--pdeathsig`, or nil.
  static let setpriv: String? = {
    #if os(Linux)
    for path in ["/usr/bin/setpriv", "/bin/setpriv"] where access(path, X_OK) == 0 {
      return supportsPdeathsig(path) ? path : nil
    }
    #endif
    return nil
  }()

  /// The path and argv to spawn for `path` run with `argv`: through
  /// `setpriv` when there is one.
  static func wrapped(path: String, argv: [String]) -> (path: String, argv: [String]) {
    guard let setpriv else { return (path, argv) }
    return (setpriv, [setpriv, "--pdeathsig", "KILL", "--", path] + argv.dropFirst())
  }

  /// True when `setpriv --pdeathsig KILL -- setpriv --help` exits 0.
  private static func supportsPdeathsig(_ setpriv: String) -> Bool {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
    let argv = [setpriv, "--pdeathsig", "KILL", "--", setpriv, "--help"]
    let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
    defer { for p in cArguments { free(p) } }
    var pid = pid_t()
    guard posix_spawn(&pid, setpriv, &actions, nil, cArguments, environ) == 0 else { return false }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR { return false }
    }
    // Exited (low 7 bits 0) with status 0.
    return status & 0x7F == 0 && (status >> 8) & 0xFF == 0
  }

  // MARK: The spawning thread

  /// Work for the spawning thread, and the thread's wake-up.
  private final class Queue: @unchecked Sendable {
    let condition = NSCondition()
    var work: [(run: () -> Void, done: DispatchSemaphore)] = []
  }

  private static let queue: Queue = {
    let queue = Queue()
    let thread = Thread {
      while true {
        queue.condition.lock()
        while queue.work.isEmpty { queue.condition.wait() }
        var run: (() -> Void)? = queue.work[0].run
        let done = queue.work[0].done
        queue.work.removeFirst()
        queue.condition.unlock()
        run?()
        // The caller's closure does not escape: no reference to it is left
        // when the caller wakes.
        run = nil
        done.signal()
      }
    }
    thread.start()
    return queue
  }()

  /// Runs `body` on the thread that spawns programs (one that never ends,
  /// so a program's parent-death signal means Forage has died), waiting
  /// for it. Without `setpriv`, runs it on the calling thread.
  static func perform<T>(_ body: () -> T) -> T {
    guard setpriv != nil else { return body() }
    return withoutActuallyEscaping(body) { body in
      var result: T?
      let done = DispatchSemaphore(value: 0)
      queue.condition.lock()
      queue.work.append((run: { result = body() }, done: done))
      queue.condition.signal()
      queue.condition.unlock()
      done.wait()
      return result!
    }
  }
}
