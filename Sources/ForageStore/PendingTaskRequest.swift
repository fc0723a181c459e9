import Foundation

/// A background task request that has not run yet, as the store keeps it, so
/// that a restarted daemon keeps its schedule.
///
///     try await store.replacePendingTaskRequests([
///       PendingTaskRequest(identifier: "com.example.refresh", kind: "appRefresh",
///                          earliestBeginDate: Date(timeIntervalSinceNow: 900)),
///     ])
///     let pending = try await store.pendingTaskRequests()
///
/// The store does not depend on the scheduler: `kind` and `strategy` hold the
/// raw values of ForageScheduler's `TaskKind` and
/// `ContinuedProcessingTaskRequest.SubmissionStrategy`, and the store refuses
/// any other value (the engine's adapter converts both ways).
public struct PendingTaskRequest: Sendable, Hashable {
  /// The identifier of the task; unique among pending requests.
  public var identifier: String
  /// `appRefresh`, `processing` or `continuedProcessing`.
  public var kind: String
  /// Nothing runs before this date; `nil` means as soon as possible. Kept
  /// to the millisecond.
  public var earliestBeginDate: Date?
  /// For `processing`: launch only while a network is available.
  public var requiresNetworkConnectivity: Bool
  /// For `processing`: launch only while the device is charging.
  public var requiresExternalPower: Bool
  /// For `continuedProcessing` (and only for it): the title, subtitle and
  /// submission strategy (`fail` or `queue`) shown while it runs.
  public var continued: Continued?

  /// What a `continuedProcessing` request holds beyond the common fields.
  public struct Continued: Sendable, Hashable {
    /// The title shown to the user while the task runs.
    public var title: String
    /// The subtitle shown to the user while the task runs.
    public var subtitle: String
    /// `fail` or `queue`: what happens when the task cannot start at once.
    public var strategy: String

    /// Creates the continued-processing part of a request.
    public init(title: String, subtitle: String, strategy: String) {
      self.title = title
      self.subtitle = subtitle
      self.strategy = strategy
    }
  }

  /// Creates a pending request.
  public init(
    identifier: String, kind: String, earliestBeginDate: Date? = nil,
    requiresNetworkConnectivity: Bool = false, requiresExternalPower: Bool = false,
    continued: Continued? = nil
  ) {
    self.identifier = identifier
    self.kind = kind
    self.earliestBeginDate = earliestBeginDate
    self.requiresNetworkConnectivity = requiresNetworkConnectivity
    self.requiresExternalPower = requiresExternalPower
    self.continued = continued
  }
}
