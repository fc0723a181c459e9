import Foundation

/// How a task behaves in **model** mode: no real work runs; each launch lasts
/// a duration drawn from a distribution, succeeds with a probability, and
/// honours (or ignores) its expiration. Model mode is fast enough for a year
/// of simulated days in a fraction of a second.
///
///     scheduler.register("com.example.refresh", model: ModelBehavior(
///       duration: .logNormal(median: .seconds(8), spread: 0.6),
///       resubmitAfter: .seconds(15 * 60), sources: ["prices", "news"]))
public struct ModelBehavior: Codable, Sendable, Hashable {
  /// How long the work takes when nothing interrupts it.
  public var duration: DurationDistribution
  /// The chance a launch that finishes in time reports success.
  public var successProbability: Double
  /// `false` models a handler that ignores its expiration: it is killed after
  /// the grace and the app is penalised.
  public var honorsExpiration: Bool
  /// How long the handler takes to checkpoint and complete after expiration.
  public var expirationResponse: Duration
  /// The reschedule rule: at launch, the handler first submits its next
  /// request, due this long after now. `nil`: it does not resubmit (the app's
  /// life cycle may still submit when it enters the background).
  public var resubmitAfter: Duration?
  /// The sources this task keeps fresh, in the order it fetches them. A
  /// successful launch refreshes them all; one cut short refreshes the share
  /// it reached (the job checkpoints and resumes next time).
  public var sources: [String]
  /// The CPU the work uses while it runs, as a share of one core (CPU
  /// seconds per second; 2 is two cores busy). The CPU monitor kills a
  /// launch above ``SchedulingPolicy/cpuMonitorLimit`` once it has used
  /// `limit × window` of CPU time (processing only off external power).
  /// `nil`: light work the monitor never notices.
  public var cpuShare: Double?
  /// The bytes a whole launch transfers. On cellular they count against
  /// ``SchedulingPolicy/cellularDataBudget`` (a launch cut short counts
  /// the share it ran), and a launch expected to transfer more than what is
  /// left waits. `nil`: unknown, nothing counted.
  public var bytesPerLaunch: Int64?
  /// For a continued-processing task: the work stops reporting progress
  /// this long into a launch (a request that hangs), and the system expires
  /// it ``SchedulingPolicy/continuedProcessingProgressTimeout`` later
  /// (reason `noProgress`) unless it ends first. `nil`: it reports progress
  /// until it ends, as a Forage job does after each commit.
  public var progressStallsAfter: Duration?

  /// A behaviour; the defaults: about 10 s, always succeeds, honours
  /// expiration, light on CPU, transfer unknown, progress reported throughout.
  public init(
    duration: DurationDistribution = .logNormal(median: .seconds(10), spread: 0.5),
    successProbability: Double = 1, honorsExpiration: Bool = true,
    expirationResponse: Duration = .seconds(1), resubmitAfter: Duration? = nil, sources: [String] = [],
    cpuShare: Double? = nil, bytesPerLaunch: Int64? = nil, progressStallsAfter: Duration? = nil
  ) {
    self.progressStallsAfter = progressStallsAfter
    self.cpuShare = cpuShare
    self.bytesPerLaunch = bytesPerLaunch
    self.duration = duration
    self.successProbability = successProbability
    self.honorsExpiration = honorsExpiration
    self.expirationResponse = expirationResponse
    self.resubmitAfter = resubmitAfter
    self.sources = sources
  }
}

/// The result of asking a ``SimulatedScheduler`` to launch a task now.
public enum LaunchAttempt: Sendable, Hashable {
  /// Launched; the number of the launch in the trace.
  case launched(Int)
  /// No request is pending for that identifier.
  case notPending
  /// The request's earliest begin date is still ahead.
  case notDue(Date)
  /// The rules hold it back for this reason.
  case deferred(DeferralReason)
}
