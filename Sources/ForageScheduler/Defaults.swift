import Foundation

/// Every default number of ForageScheduler, in one place.
///
/// Each value says where it comes from: **Apple** (documented by Apple, with
/// the page) or **assumed** (our reading of observed behaviour; change it in
/// ``SchedulingPolicy``). `docs/scheduling-model.md` explains each one.
public enum SchedulerDefaults {
  /// Apple: at most one app-refresh request pending per app.
  /// <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler/error/code/toomanypendingtaskrequests>
  public static let maxPendingAppRefreshRequests = 1
  /// Apple: at most ten processing requests pending per app (same page).
  public static let maxPendingProcessingRequests = 10
  /// Apple (WWDC 2019 "Advances in App Background Execution"): an app-refresh
  /// task gets about 30 seconds.
  public static let appRefreshBudget: Duration = .seconds(30)
  /// Assumed: Apple says processing tasks get "several minutes"; we use 5.
  public static let processingBudget: Duration = .seconds(5 * 60)
  /// Assumed: continued-processing tasks run as long as they report progress;
  /// we cap a launch at one hour.
  public static let continuedProcessingBudget: Duration = .seconds(60 * 60)
  /// Assumed: a continued-processing task that reports no progress for this
  /// long is expired (Apple, WWDC 2025: tasks must report progress or are expired).
  public static let continuedProcessingProgressTimeout: Duration = .seconds(60)
  /// Assumed: at most this many continued-processing tasks run at once.
  public static let maxConcurrentContinuedProcessingTasks = 1
  /// Assumed: after its expiration handler is called, a task that has not
  /// completed is killed after this grace (iOS's watchdog is "a few seconds").
  public static let expirationGrace: Duration = .seconds(5)
  /// Assumed: after a kill the app gets no discretionary launches for this long.
  public static let killPenalty: Duration = .seconds(12 * 3600)
  /// Assumed: a refresh is placed this long before a predicted app open.
  public static let refreshLeadTime: Duration = .seconds(10 * 60)
  /// Assumed: app opens are learned in time-of-day bins of this width.
  public static let predictionBinWidth: Duration = .seconds(30 * 60)
  /// Assumed: app-open history is kept for this many days.
  public static let usageHistoryDays = 14
  /// Assumed: a bin is a "usual" open time when the app was opened in it on at
  /// least this share of the days observed.
  public static let usualOpenShare = 0.25
  /// Assumed: refresh launches allowed per day before any use is learned, and
  /// the floor for an app that is used at all.
  public static let baseRefreshAllowance = 1.0
  /// Assumed: each average daily app open adds this many refresh launches a day.
  public static let refreshAllowancePerDailyOpen = 1.0
  /// Assumed: the most refresh launches a day, however much the app is used.
  public static let maxRefreshAllowance = 12.0
  /// Assumed: an app not opened for this many days gets no refresh launches.
  public static let dormantAfterDays = 8
  /// Apple (`BGProcessingTaskRequest`): processing runs "as long as the user
  /// has used the app within the past week".
  public static let processingRequiresUseWithin: Duration = .seconds(7 * 86_400)
  /// Assumed: with no usage history yet, a refresh runs this long after it
  /// becomes due (and the conditions allow it).
  public static let coldStartDelay: Duration = .seconds(60 * 60)
  /// Assumed: the screen must have been off this long before processing starts.
  public static let idleDelay: Duration = .seconds(15 * 60)
  /// Assumed: on battery, the screen must have been off this long (processing
  /// on battery is rare and happens in long idle stretches, typically at night).
  public static let batteryIdleDelay: Duration = .seconds(2 * 3600)
  /// Assumed: processing starts at a random point up to this long after the
  /// device became idle enough.
  public static let processingStartJitter: Duration = .seconds(60 * 60)
  /// Assumed: processing without external power needs at least this battery level.
  public static let processingMinimumBattery = 0.3
  /// Assumed: below this battery level, off external power, no discretionary
  /// (refresh or processing) launch starts. Apple names "critically low
  /// battery" as a factor (WWDC 2020 "Background execution demystified");
  /// notes of the session give 20 %.
  public static let discretionaryMinimumBattery = 0.2
  /// Assumed from developers' crash logs ("exceeding limit of 80% cpu over 60
  /// seconds", Apple Developer Forums thread 675166): the CPU monitor kills a
  /// background launch that uses more than this share of one core…
  public static let cpuMonitorLimit = 0.8
  /// …averaged over this window (so after `limit × window` of CPU time).
  public static let cpuMonitorWindow: Duration = .seconds(60)
  /// Assumed: the cellular data a day's background launches may transfer
  /// (over any 24 hours). Apple names data budgets as a factor (WWDC 2020)
  /// and gives no size.
  public static let cellularDataBudget: Int64 = 10_000_000
  /// Assumed: battery drain per hour on battery, in fraction of full.
  public static let batteryDrainPerHour = 0.04
  /// Assumed: charge gained per hour while charging, in fraction of full.
  public static let batteryChargePerHour = 0.4
  /// The start of a simulation when none is given: Monday 2026-01-05 00:00 UTC.
  public static let simulationStart = Date(timeIntervalSince1970: 1_767_571_200)
  /// How often the ``SystemScheduler`` re-reads conditions when it has nothing
  /// due sooner.
  public static let systemPollInterval: Duration = .seconds(60)
}
