import Foundation

/// A request to stop a running job early, the way its budget would stop it:
/// no new claims, in-flight fetches get the grace period, everything done is
/// committed, and the summary says the job was stopped. The next launch
/// continues the same crawl.
///
///     let stop = StopRequest()
///     signalWatcher.onSignal { _ in stop.request() }        // SIGINT, SIGTERM
///     let summary = try await job.run(budget: .seconds(300), stop: stop)
///     if summary.stoppedOnRequest { … }
///
/// Unlike cancelling the job's task, which cancels in-flight fetches at
/// once, a stop request lets them finish within ``Defaults/grace``.
public final class StopRequest: @unchecked Sendable {
  // `requested` and `waiters` are only touched with `lock` held.
  private let lock = NSLock()
  private var requested = false
  private var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
  private var nextWaiter = 0

  /// Creates a request that has not been made yet.
  public init() {}

  /// True once ``request()`` was called.
  public var isRequested: Bool {
    lock.lock()
    defer { lock.unlock() }
    return requested
  }

  /// Asks the job to stop; returns false when it had been asked already.
  @discardableResult
  public func request() -> Bool {
    lock.lock()
    let first = !requested
    requested = true
    let woken = waiters.values
    waiters.removeAll()
    lock.unlock()
    for w in woken { w.resume() }
    return first
  }

  /// Returns when ``request()`` is called, or when the calling task is
  /// cancelled.
  func wait() async {
    let id = lock.withLock {
      nextWaiter += 1
      return nextWaiter
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        lock.lock()
        if requested || Task.isCancelled {
          lock.unlock()
          continuation.resume()
          return
        }
        waiters[id] = continuation
        lock.unlock()
      }
    } onCancel: {
      lock.lock()
      let waiter = waiters.removeValue(forKey: id)
      lock.unlock()
      waiter?.resume()
    }
  }
}
