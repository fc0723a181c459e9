import Foundation

/// The kind of a background task, which decides its rules and budget.
public enum TaskKind: String, Codable, Sendable, Hashable, CaseIterable {
  /// A short refresh (Apple: `BGAppRefreshTaskRequest`), about 30 seconds.
  case appRefresh
  /// Deferrable maintenance (Apple: `BGProcessingTaskRequest`), minutes, when idle.
  case processing
  /// Work the user started that continues with visible progress
  /// (Apple: `BGContinuedProcessingTaskRequest`).
  case continuedProcessing

  /// The budget a launch of this kind gets when nothing names one: 30 s for
  /// a refresh, 5 min for processing, 1 h for continued processing (see
  /// ``SchedulerDefaults`` for where each comes from).
  ///
  ///     TaskKind.processing.defaultBudget   // .seconds(300)
  public var defaultBudget: Duration {
    switch self {
    case .appRefresh: SchedulerDefaults.appRefreshBudget
    case .processing: SchedulerDefaults.processingBudget
    case .continuedProcessing: SchedulerDefaults.continuedProcessingBudget
    }
  }
}

/// A request to launch the app in the background to run a task.
///
/// The concrete requests are ``AppRefreshTaskRequest``, ``ProcessingTaskRequest``
/// and ``ContinuedProcessingTaskRequest``; ``AnyTaskRequest`` stores any of them.
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskrequest>
public protocol TaskRequest: Sendable, CustomStringConvertible {
  /// The identifier of the task, registered with a launch handler.
  var identifier: String { get }
  /// Nothing runs before this date; `nil` means as soon as the system decides.
  var earliestBeginDate: Date? { get set }
  /// The kind of task this request asks for.
  var kind: TaskKind { get }
}

/// A request for a short refresh task, about 30 seconds, placed by the system
/// shortly before the user usually opens the app.
///
///     var request = AppRefreshTaskRequest(identifier: "com.example.refresh")
///     request.earliestBeginDate = Date(timeIntervalSinceNow: 15 * 60)
///     try scheduler.submit(request)
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgapprefreshtaskrequest>
public struct AppRefreshTaskRequest: TaskRequest, Codable, Hashable {
  /// The identifier of the registered task.
  public let identifier: String
  public var earliestBeginDate: Date?
  public var kind: TaskKind { .appRefresh }

  /// Creates a request for the task registered under `identifier`.
  public init(identifier: String, earliestBeginDate: Date? = nil) {
    self.identifier = identifier
    self.earliestBeginDate = earliestBeginDate
  }

  public var description: String { describe("AppRefreshTaskRequest", identifier, earliestBeginDate, []) }
}

/// A request for a deferrable processing task that runs for minutes while the
/// device is idle, on power and with a network when it asks for them.
///
///     var request = ProcessingTaskRequest(identifier: "com.example.crawl")
///     request.requiresExternalPower = true
///     request.requiresNetworkConnectivity = true
///     try scheduler.submit(request)
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgprocessingtaskrequest>
public struct ProcessingTaskRequest: TaskRequest, Codable, Hashable {
  public let identifier: String
  public var earliestBeginDate: Date?
  /// Launch only while a network is available (Apple's default: `false`).
  public var requiresNetworkConnectivity: Bool
  /// Launch only while the device is charging (Apple's default: `false`).
  public var requiresExternalPower: Bool
  public var kind: TaskKind { .processing }

  /// Creates a request for the task registered under `identifier`.
  public init(
    identifier: String, earliestBeginDate: Date? = nil,
    requiresNetworkConnectivity: Bool = false, requiresExternalPower: Bool = false
  ) {
    self.identifier = identifier
    self.earliestBeginDate = earliestBeginDate
    self.requiresNetworkConnectivity = requiresNetworkConnectivity
    self.requiresExternalPower = requiresExternalPower
  }

  public var description: String {
    var flags: [String] = []
    if requiresNetworkConnectivity { flags.append("network") }
    if requiresExternalPower { flags.append("power") }
    return describe("ProcessingTaskRequest", identifier, earliestBeginDate, flags)
  }
}

/// A request to continue work the user started, with progress shown by the
/// system; it starts at once (while the app is in the foreground) or is queued.
///
///     let request = ContinuedProcessingTaskRequest(
///       identifier: "com.example.export.photos", title: "Exporting", subtitle: "0 of 40")
///     try scheduler.submit(request)
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgcontinuedprocessingtaskrequest>
public struct ContinuedProcessingTaskRequest: TaskRequest, Codable, Hashable {
  /// What happens when the task cannot start at once.
  public enum SubmissionStrategy: String, Codable, Sendable, Hashable {
    /// Submission fails with ``SchedulerError/immediateRunIneligible``.
    case fail
    /// The request waits until the system can run it.
    case queue
  }

  public let identifier: String
  public var earliestBeginDate: Date?
  /// The title shown to the user while the task runs.
  public var title: String
  /// The subtitle shown to the user while the task runs.
  public var subtitle: String
  /// What to do when the task cannot start immediately (Apple's default: `.queue`).
  public var strategy: SubmissionStrategy
  public var kind: TaskKind { .continuedProcessing }

  /// Creates a request for the task registered under `identifier`.
  public init(identifier: String, title: String, subtitle: String, strategy: SubmissionStrategy = .queue) {
    self.identifier = identifier
    self.title = title
    self.subtitle = subtitle
    self.strategy = strategy
  }

  public var description: String {
    describe("ContinuedProcessingTaskRequest", identifier, earliestBeginDate, ["\"\(title)\"", strategy.rawValue])
  }
}

/// Any task request, in a form that can be stored and compared.
///
///     let stored = AnyTaskRequest(request)
///     let data = try JSONEncoder().encode(stored)
public enum AnyTaskRequest: TaskRequest, Codable, Hashable {
  case appRefresh(AppRefreshTaskRequest)
  case processing(ProcessingTaskRequest)
  case continuedProcessing(ContinuedProcessingTaskRequest)

  /// Wraps a request of any of the three kinds.
  public init(_ request: any TaskRequest) {
    if let r = request as? AnyTaskRequest { self = r; return }
    if let r = request as? AppRefreshTaskRequest { self = .appRefresh(r); return }
    if let r = request as? ProcessingTaskRequest { self = .processing(r); return }
    if let r = request as? ContinuedProcessingTaskRequest { self = .continuedProcessing(r); return }
    // A caller-defined conformance: keep its identifier and date as a refresh.
    switch request.kind {
    case .processing:
      self = .processing(ProcessingTaskRequest(identifier: request.identifier, earliestBeginDate: request.earliestBeginDate))
    case .continuedProcessing:
      self = .continuedProcessing(ContinuedProcessingTaskRequest(identifier: request.identifier, title: request.identifier, subtitle: ""))
    case .appRefresh:
      self = .appRefresh(AppRefreshTaskRequest(identifier: request.identifier, earliestBeginDate: request.earliestBeginDate))
    }
  }

  /// The wrapped request.
  public var request: any TaskRequest {
    switch self {
    case .appRefresh(let r): return r
    case .processing(let r): return r
    case .continuedProcessing(let r): return r
    }
  }

  public var identifier: String {
    switch self {
    case .appRefresh(let r): r.identifier
    case .processing(let r): r.identifier
    case .continuedProcessing(let r): r.identifier
    }
  }
  public var kind: TaskKind {
    switch self {
    case .appRefresh: .appRefresh
    case .processing: .processing
    case .continuedProcessing: .continuedProcessing
    }
  }
  public var earliestBeginDate: Date? {
    get {
      switch self {
      case .appRefresh(let r): r.earliestBeginDate
      case .processing(let r): r.earliestBeginDate
      case .continuedProcessing(let r): r.earliestBeginDate
      }
    }
    set {
      switch self {
      case .appRefresh(var r): r.earliestBeginDate = newValue; self = .appRefresh(r)
      case .processing(var r): r.earliestBeginDate = newValue; self = .processing(r)
      case .continuedProcessing(var r): r.earliestBeginDate = newValue; self = .continuedProcessing(r)
      }
    }
  }
  /// True for a processing request that needs a network.
  public var requiresNetworkConnectivity: Bool {
    if case .processing(let r) = self { return r.requiresNetworkConnectivity }
    return kind == .appRefresh
  }
  /// True for a processing request that needs external power.
  public var requiresExternalPower: Bool {
    if case .processing(let r) = self { return r.requiresExternalPower }
    return false
  }
  public var description: String { request.description }
}

private func describe(_ type: String, _ identifier: String, _ date: Date?, _ flags: [String]) -> String {
  var parts = [identifier]
  if let date { parts.append("earliest \(TraceFormat.timestamp(date))") }
  parts += flags
  return "\(type)(\(parts.joined(separator: ", ")))"
}
