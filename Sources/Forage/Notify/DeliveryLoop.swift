import Foundation
import ForageSupport

/// Delivers notifications beside a running launch: a round whenever a commit
/// queued some, and a last round once the crawl ends, all before `until`
/// (the launch's budget less its stop margin).
///
/// At `until`, or when the launch is asked to stop (`stop`), delivery stops
/// the way fetches do: no new attempt starts, the attempts in flight get
/// ``EngineDefaults/grace`` to finish, and then they are abandoned (a command's
/// process group gets SIGTERM, then SIGKILL a second later; a webhook's
/// request is cancelled). Cancelling the launch abandons them at once. An
/// abandoned notification is neither delivered nor failed: its claim is
/// released with its attempts, next attempt and last error unchanged, and
/// it goes again, with the same id, in the next launch or the daemon.
final class DeliveryLoop: Sendable {
  private let task: Task<Notifier.Report, Never>
  private let timer: Task<Void, Never>
  private let signal: WakeSignal
  /// True once delivery is stopping: no new attempt starts.
  private let halted: Locked<Bool>

  init(notifier: Notifier, until deadline: ContinuousClock.Instant, stop: StopRequest? = nil) {
    let signal = WakeSignal()
    let halted = Locked(false)
    self.signal = signal
    self.halted = halted
    let task = Task {
      var report = Notifier.Report()
      // The request itself is read too, not only the halt the timer sets on
      // seeing it: an attempt ending just after the request starts no other.
      let mayStart: @Sendable () -> Bool = { !halted.withLock { $0 } && !(stop?.isRequested ?? false) }
      while !Task.isCancelled && mayStart() {
        do {
          report.add(try await notifier.deliverDue(startingNew: mayStart))
        } catch {
          if !Task.isCancelled { report.problems.append("delivery stopped: \(error)") }
          break
        }
        if await !signal.wait() { break }
      }
      return report
    }
    self.task = task
    self.timer = Task {
      // Whichever comes first: the deadline or the stop request.
      await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
        if let stop { group.addTask { await stop.wait() } }
        await group.next()
        group.cancelAll()
      }
      // Cancelled: the loop is over (``finish()``) or abandoned (``cancel()``).
      if Task.isCancelled { return }
      halted.withLock { $0 = true }
      signal.halt()
      try? await Task.sleep(for: EngineDefaults.grace)
      if Task.isCancelled { return }
      task.cancel()
    }
  }

  /// A commit queued notifications: deliver them.
  func wake() { signal.poke() }

  /// Abandons delivery now (the launch was cancelled or failed); ``finish()``
  /// then waits for what was in flight to end.
  func cancel() {
    task.cancel()
    signal.finish()
  }

  /// The crawl has ended: delivers what is due now (unless delivery is
  /// stopping; until the deadline at most), waits for the attempts in flight
  /// (within the grace when stopping) and returns what the loop did.
  func finish() async -> Notifier.Report {
    signal.finish()
    let report = await task.value
    timer.cancel()
    return report
  }
}
