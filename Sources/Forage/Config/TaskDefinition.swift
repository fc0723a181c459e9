import ForageScheduler

/// A background task of the config: when it may run and which sources it serves.
///
///     TaskDefinition(id: "com.example.refresh", kind: .appRefresh, every: .seconds(900),
///                    budget: .seconds(30), sources: ["prices"])
///
/// `appRefresh` and `processing` tasks are scheduled. A `continuedProcessing`
/// task is the user's "refresh now": iOS starts one only from a user action
/// in the foreground (`BGContinuedProcessingTaskRequest`, with ``title``,
/// ``subtitle`` and ``strategy``), so nothing submits it on a schedule; an app
/// submits ``TaskRunner/request(for:earliestBeginDate:)`` from the user's
/// action, `forage run --task ID` runs it once, and `forage simulate
/// --refresh-now` forecasts it.
///
///     TaskDefinition(id: "com.example.refresh-now", kind: .continuedProcessing, sources: ["prices"],
///                    title: "Refreshing prices", subtitle: "Every shop")
public struct TaskDefinition: Sendable, Hashable {
  /// The task identifier (as in BGTaskSchedulerPermittedIdentifiers).
  public var id: String
  /// The kind of background task (ForageScheduler's `TaskKind`), which
  /// decides the request submitted and the default budget.
  public var kind: TaskKind
  /// The desired interval between launches (the earliest begin date of the
  /// next request is this far after a launch starts).
  public var every: Duration
  /// The time a launch may take before it must stop and save its work
  /// (by default the kind's `defaultBudget`).
  public var budget: Duration
  /// Processing launches wait for a network (Apple's
  /// `requiresNetworkConnectivity`).
  public var requiresNetwork: Bool
  /// Processing launches wait for external power (Apple's
  /// `requiresExternalPower`).
  public var requiresExternalPower: Bool
  /// Names of the sources a launch refreshes.
  public var sources: [String]
  /// The CPU a launch uses while it runs, as a share of one core (`0.6`;
  /// `2` is two cores busy), for the simulator's CPU monitor: on battery,
  /// a launch above its limit is killed. `nil`: light work (a crawl mostly
  /// waits for the network).
  public var cpu: Double?
  /// The bytes a launch transfers, for the simulator's cellular data budget
  /// when the store has no runs of the task to average. `nil`: unknown.
  public var transfer: Int64?
  /// For a `continuedProcessing` task: the title the system shows while it
  /// runs (the task's id when nil).
  public var title: String?
  /// For a `continuedProcessing` task: the subtitle shown under the title.
  public var subtitle: String?
  /// For a `continuedProcessing` task: what happens when it cannot start at
  /// once (Apple's default, `.queue`: it waits; `.fail`: the submission fails).
  public var strategy: ContinuedProcessingTaskRequest.SubmissionStrategy

  /// The shortest `every` a config accepts for a task of `kind`: one
  /// minute for every kind. A launch fetches pages from other people's
  /// servers, and a shorter interval is polling (`"every": "0s"` launched
  /// about 20 times a second); iOS gives an app far fewer launches anyway.
  public static func minimumInterval(for kind: TaskKind) -> Duration { .seconds(60) }

  /// A task; `budget` defaults to the kind's.
  public init(
    id: String, kind: TaskKind = .appRefresh, every: Duration = .seconds(900),
    budget: Duration? = nil, requiresNetwork: Bool = true, requiresExternalPower: Bool = false,
    sources: [String], cpu: Double? = nil, transfer: Int64? = nil,
    title: String? = nil, subtitle: String? = nil, strategy: ContinuedProcessingTaskRequest.SubmissionStrategy = .queue
  ) {
    self.title = title
    self.subtitle = subtitle
    self.strategy = strategy
    self.id = id
    self.kind = kind
    self.every = every
    self.budget = budget ?? kind.defaultBudget
    self.requiresNetwork = requiresNetwork
    self.requiresExternalPower = requiresExternalPower
    self.sources = sources
    self.cpu = cpu
    self.transfer = transfer
  }
}
