/// A wake-up call for one waiting loop: the system scheduler's run loop
/// (woken by a submission or the end of a launch) and a launch's
/// notification delivery (woken by a commit that queued notifications).
///
///     let wake = WakeSignal()
///     // the loop:
///     while await wake.wait() { doARound() }
///     // elsewhere:
///     wake.poke()     // one more round
///     wake.finish()   // one last round, then `wait()` returns false
///
/// A poke sent while the loop is busy is kept (one pending poke, however
/// many were sent), so none is lost. Cancelling the waiting task ends that
/// wait (it returns false) without leaving anything behind: the next wait
/// waits again. ``halt()`` ends every wait from then on.
package final class WakeSignal: Sendable {
  private struct State {
    /// A poke sent while no one waited.
    var poked = false
    /// ``finish()`` was called: one last round, then stop.
    var finished = false
    /// The last round after ``finish()`` has been handed out.
    var lastRoundDone = false
    /// ``halt()`` was called: no more rounds.
    var halted = false
    var waiter: CheckedContinuation<Bool, Never>?
  }

  private let state = Locked(State())

  /// A signal with nothing pending.
  package init() {}

  /// True while a loop waits (in ``wait()`` or ``wait(timeout:)``) with no
  /// poke pending: what a test waits for before it pokes, so that the poke
  /// is the one thing that can wake the loop.
  package var isWaiting: Bool { state.withLock { $0.waiter != nil } }

  /// Wakes the waiting loop for another round, or, when none waits, makes
  /// the next ``wait()`` return at once.
  package func poke() {
    resume(returning: true) { $0.poked = true }
  }

  /// Asks for one last round: a waiting loop wakes for it, a busy loop gets
  /// it from its next ``wait()``; the wait after that returns false.
  package func finish() {
    resume(returning: true) { s in
      s.finished = true
      if s.waiter != nil { s.lastRoundDone = true }
    }
  }

  /// No more rounds, not even a last one: a waiting loop stops waiting now
  /// and every later ``wait()`` returns false.
  package func halt() {
    resume(returning: false) { $0.halted = true }
  }

  /// Updates the state and hands the waiter, if any, `value` after
  /// unlocking.
  private func resume(returning value: Bool, _ update: (inout State) -> Void) {
    let waiter = state.withLock { s -> CheckedContinuation<Bool, Never>? in
      update(&s)
      defer { s.waiter = nil }
      return s.waiter
    }
    waiter?.resume(returning: value)
  }

  /// Waits for a poke or the finish. True: make another round (a poke came,
  /// or the finish did and calls for one last round); false: stop (halted,
  /// the last round was made, or the calling task was cancelled).
  package func wait() async -> Bool {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
        let now = state.withLock { s -> Bool? in
          // Checked under the lock: either the cancellation handler below
          // already ran (and we return now), or it runs later and finds the
          // waiter to resume. A cancelled wait leaves a pending poke for the
          // next one.
          if s.halted || Task.isCancelled { return false }
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
      resume(returning: false) { _ in }
    }
  }

  /// Returns after a poke (one sent before the call counts), after
  /// `timeout`, or at once when the calling task is cancelled.
  package func wait(timeout: Duration) async {
    // Whichever child ends first cancels the other. Neither leaves a poke
    // behind: a stray one would make the next wait return at once, and a
    // run loop spin.
    await withTaskGroup(of: Void.self) { group in
      group.addTask { try? await Task.sleep(for: timeout) }
      group.addTask { _ = await self.wait() }
      await group.next()
      group.cancelAll()
    }
  }
}
