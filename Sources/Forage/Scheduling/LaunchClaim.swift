import Foundation
import ForageScheduler
import ForageStore

/// A fleet daemon's claim on one launch of a task (``LeaseStore/claimLaunch(task:lease:)``),
/// held for the whole launch: taken for half the task's interval, and renewed
/// while the launch runs, so that a launch outlasting that half does not
/// let another daemon start the task's next launch beside it.
///
///     guard let claim = try await LaunchClaim.take(task: task, daemon: owner, store: store, now: now) else {
///       return  // another daemon of the fleet runs this launch
///     }
///     try await claim.hold(log: log, now: clock) { try await job.run(…) }
///
/// The claim's owner is the daemon and the task (``owner(daemon:task:)``),
/// so that renewing it (``LeaseStore/renew(_:lease:)`` renews every claim
/// of an owner) extends this task's claim only, not the claims the daemon
/// took on other tasks' launches. The claim is not released when the
/// launch ends: it still covers the launch's slot for the daemons that
/// reach the same due launch a little later, and lapses by itself.
struct LaunchClaim: Sendable {
  /// The task launched.
  let task: String
  /// Who holds the claim (``owner(daemon:task:)``).
  let owner: String
  /// How long each renewal makes the claim last: half the task's interval.
  let length: Duration
  let store: any LeaseStore

  /// The owner of `daemon`'s claims on launches of `task`.
  static func owner(daemon: String, task: String) -> String { "\(daemon) \(task)" }

  /// Claims the launch of `task` due at `now` for `daemon`, for half the
  /// task's interval; nil when another daemon of the fleet holds it.
  ///
  /// - Throws: what the store throws.
  static func take(task: TaskDefinition, daemon: String, store: any LeaseStore, now: Date) async throws
    -> LaunchClaim?
  {
    let claim = LaunchClaim(
      task: task.id, owner: owner(daemon: daemon, task: task.id), length: task.every / 2, store: store)
    guard try await store.claimLaunch(task: task.id, lease: Lease(owner: claim.owner, for: claim.length, at: now))
    else { return nil }
    return claim
  }

  /// How often ``hold(renewEvery:log:now:_:)`` renews: the fleet's renewal
  /// interval, or a third of the claim's length when that is shorter (a
  /// task launched every few seconds), never more often than every 100 ms
  /// (a task built in code with an `every` of zero).
  var renewalInterval: Duration { max(.milliseconds(100), min(EngineDefaults.fleetLeaseRenewal, length / 3)) }

  /// Runs `body` while renewing the claim every `renewEvery` (by default
  /// ``renewalInterval``); the renewals have stopped when it returns or
  /// throws. A renewal that finds the claim gone (it lapsed while this
  /// daemon stood still, and another took it) or fails is written to `log`;
  /// the launch goes on (the frontier's leases keep two launches' pages apart).
  func hold<T: Sendable>(
    renewEvery: Duration? = nil, log: SchedulerLog, now: @escaping @Sendable () -> Date,
    _ body: () async throws -> T
  ) async rethrows -> T {
    let interval = renewEvery ?? renewalInterval
    let renewal = Task { [self] in
      var reported = false
      while !Task.isCancelled {
        do { try await Task.sleep(for: interval) } catch { return }
        do {
          let held = try await store.renew(.launch, lease: Lease(owner: owner, for: length, at: now()))
          if held == 0 && !reported {
            reported = true
            log.write("\(task): another daemon of the fleet took this launch's claim while it ran (it went on)")
          }
        } catch {
          if !reported {
            reported = true
            log.write("\(task): cannot renew this launch's claim in the store (\(error)); it may lapse")
          }
        }
      }
    }
    do {
      let result = try await body()
      renewal.cancel()
      await renewal.value
      return result
    } catch {
      renewal.cancel()
      await renewal.value
      throw error
    }
  }
}
