import ForageSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process groups of the programs the `command` channel is running, so
/// that a process about to quit at once (a second SIGINT, say) takes them
/// along: no program Forage started outlives it.
///
///     ChildProcesses.killAll()      // in the quit-now path, just before exit()
///     exit(130)
///
/// Each program runs in a process group of its own, whose id is its pid
/// (see ``CommandRunner``). It is added here when it is spawned and removed
/// once it has exited, before it is reaped, under the same lock as
/// ``killAll()``: a signal from here never reaches a number the system has
/// since given to another process.
///
/// A Forage killed with SIGKILL runs no code: there, on Linux, the kernel
/// kills each program itself (``ParentDeath``: `PR_SET_PDEATHSIG`, set by
/// `setpriv`), but not the programs it started, which keep running with
/// init as their parent until they end by themselves.
package enum ChildProcesses {
  private static let groups = Locked<Set<pid_t>>([])
  /// Set by ``killAll()``: the process is quitting, and a program that ends
  /// now ended by its hand, not by itself.
  private static let quitting = Locked(false)

  /// True once ``killAll()`` ran: the process is about to exit.
  static var isQuitting: Bool { quitting.withLock { $0 } }

  /// Records a started program's process group.
  static func add(_ group: pid_t) {
    groups.withLock { _ = $0.insert(group) }
  }

  /// Forgets a program that has exited; call before reaping it.
  static func remove(_ group: pid_t) {
    groups.withLock { _ = $0.remove(group) }
  }

  /// The process groups of the programs running now, in no order.
  package static var running: [pid_t] { groups.withLock { Array($0) } }

  /// Sends SIGKILL to the process group of every program running now (and to
  /// the program itself, should it have left its group), for a process that
  /// is about to exit without waiting for them.
  ///
  /// - Returns: how many programs were signalled.
  @discardableResult
  package static func killAll() -> Int {
    quitting.withLock { $0 = true }
    return groups.withLock { groups in
      for group in groups where kill(-group, SIGKILL) != 0 { kill(group, SIGKILL) }
      return groups.count
    }
  }
}
