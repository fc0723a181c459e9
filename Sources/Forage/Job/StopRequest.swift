import ForageSupport
import Foundation

/// A request to stop a running job early, the way its budget would stop it:
/// no new claims and no new notification attempts, in-flight fetches and
/// deliveries get the grace period (a delivery still running then is
/// abandoned and stays pending), everything done is committed, and the
/// summary says the job was stopped. The next launch continues the same crawl.
///
///     let stop = StopRequest()
///     signalWatcher.onSignal { _ in stop.request() }        // SIGINT, SIGTERM
///     let summary = try await job.run(budget: .seconds(300), stop: stop)
///     if summary.stoppedOnRequest { … }
///
/// Unlike cancelling the job's task, which cancels in-flight fetches and
/// deliveries at once, a stop request lets them finish within
/// ``EngineDefaults/grace``.
public final class StopRequest: Sendable {
  /// Whether a stop was asked for, and the jobs waiting for one (resumed
  /// after unlocking).
  private struct State {
    var requested = false
    var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    var nextWaiter = 0
  }

  private let state = Locked(State())

  /// Creates a request that has not been made yet.
  public init() {}

  /// True once ``request()`` was called.
  public var isRequested: Bool { state.withLock { $0.requested } }

  /// Asks the job to stop; returns false when it had been asked already.
  @discardableResult
  public func request() -> Bool {
    let (first, woken) = state.withLock { s in
      let first = !s.requested
      s.requested = true
      defer { s.waiters.removeAll() }
      return (first, Array(s.waiters.values))
    }
    for w in woken { w.resume() }
    return first
  }

  /// Returns when ``request()`` is called, or when the calling task is
  /// cancelled.
  func wait() async {
    let id = state.withLock { s in
      s.nextWaiter += 1
      return s.nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let now = state.withLock { s in
          if s.requested || Task.isCancelled { return true }
          s.waiters[id] = continuation
          return false
        }
        if now { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
      waiter?.resume()
    }
  }
}
