/// A background task of the config: when it may run and which sources it serves.
///
///     TaskDefinition(id: "com.example.refresh", kind: .appRefresh, every: .seconds(900),
///                    budget: .seconds(30), sources: ["prices"])
public struct TaskDefinition: Sendable, Hashable {
  /// The task identifier (as in BGTaskSchedulerPermittedIdentifiers).
  public var id: String
  public var kind: TaskKind
  /// The desired interval between launches (the earliest begin date of the
  /// next request is this far after a launch starts).
  public var every: Duration
  /// The time a launch may take before it must stop and save its work.
  public var budget: Duration
  public var requiresNetwork: Bool
  public var requiresExternalPower: Bool
  /// Names of the sources a launch refreshes.
  public var sources: [String]

  public init(
    id: String, kind: TaskKind = .appRefresh, every: Duration = .seconds(900),
    budget: Duration? = nil, requiresNetwork: Bool = true, requiresExternalPower: Bool = false,
    sources: [String]
  ) {
    self.id = id
    self.kind = kind
    self.every = every
    self.budget = budget ?? kind.defaultBudget
    self.requiresNetwork = requiresNetwork
    self.requiresExternalPower = requiresExternalPower
    self.sources = sources
  }
}

/// The kinds of background task, after Apple's BackgroundTasks framework.
public enum TaskKind: String, Sendable, Hashable, CaseIterable {
  /// Short (about 30 s), placed before the user usually opens the app.
  case appRefresh
  /// Minutes, in idle windows, maybe only on power.
  case processing
  /// Started by the user and continued in the background with progress.
  case continuedProcessing

  /// The budget a task of this kind gets when the config names none.
  public var defaultBudget: Duration {
    switch self {
    case .appRefresh: return Defaults.appRefreshBudget
    case .processing, .continuedProcessing: return Defaults.processingBudget
    }
  }
}
