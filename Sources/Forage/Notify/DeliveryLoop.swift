import Foundation
import ForageSupport

/// Delivers notifications beside a running launch: a round whenever a commit
/// queued some, and a last round once the crawl ends, all before `until`
/// (the launch's budget less its stop margin). At `until`, or when the launch
/// is cancelled, the round in flight is abandoned; what it had not settled
/// waits for the next launch or the daemon, with the same ids.
final class DeliveryLoop: Sendable {
  private let task: Task<Notifier.Report, Never>
  private let timer: Task<Void, Never>
  private let signal: WakeSignal

  init(notifier: Notifier, until deadline: ContinuousClock.Instant) {
    let signal = WakeSignal()
    self.signal = signal
    let task = Task {
      var report = Notifier.Report()
      while !Task.isCancelled {
        do {
          report.add(try await notifier.deliverDue())
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
      try? await Task.sleep(until: deadline, clock: .continuous)
      task.cancel()
    }
  }

  /// A commit queued notifications: deliver them.
  func wake() { signal.poke() }

  /// Abandons delivery now.
  func cancel() {
    task.cancel()
    signal.finish()
  }

  /// The crawl has ended: delivers what is due now (until the deadline at
  /// most) and returns what the loop did.
  func finish() async -> Notifier.Report {
    signal.finish()
    let report = await task.value
    timer.cancel()
    return report
  }
}

/// A wake-up call between the job and its delivery loop: pokes are not
/// lost while the loop is busy (one pending poke is kept), and `finish`
/// lets the loop make its last round and stop.
final class WakeSignal: Sendable {
  private struct State {
    var poked = false
    var finished = false
    var lastRoundDone = false
    var cancelled = false
    var waiter: CheckedContinuation<Bool, Never>?
  }
  private let state = Locked(State())

  func poke() {
    let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
      s.poked = true
      defer { s.waiter = nil }
      return s.waiter
    }
    waiter?.resume(returning: true)
  }

  func finish() {
    let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
      s.finished = true
      if s.waiter != nil { s.lastRoundDone = true }
      defer { s.waiter = nil }
      return s.waiter
    }
    waiter?.resume(returning: true)
  }

  /// Waits for a poke or the finish. True: make another round (a poke came,
  /// or the finish did and calls for one last round); false: stop.
  func wait() async -> Bool {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
        let now = state.withLock { s -> Bool? in
          if s.cancelled { return false }
          if s.poked {
            s.poked = false
            return true
          }
          if s.finished {
            if !s.lastRoundDone {
              s.lastRoundDone = true
              return true
            }
            return false
          }
          s.waiter = c
          return nil
        }
        if let now { c.resume(returning: now) }
      }
    } onCancel: {
      let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
        s.cancelled = true
        defer { s.waiter = nil }
        return s.waiter
      }
      waiter?.resume(returning: false)
    }
  }
}
