import ForageScheduler

/// A background task of the config: when it may run and which sources it serves.
///
///     TaskDefinition(id: "com.example.refresh", kind: .appRefresh, every: .seconds(900),
///                    budget: .seconds(30), sources: ["prices"])
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
