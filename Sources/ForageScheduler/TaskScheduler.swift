import Foundation

/// A scheduler of background tasks with the shape of Apple's `BGTaskScheduler`:
/// register a handler per identifier while launching, submit requests, and
/// the scheduler launches the handlers when its model allows.
///
///     let scheduler: any TaskScheduler = SimulatedScheduler(device: .commuter, seed: 1)
///     scheduler.register("com.example.refresh") { task in
///       try await refresh(within: task.remainingBudget)
///     }
///     scheduler.finishLaunching()
///     try scheduler.submit(AppRefreshTaskRequest(identifier: "com.example.refresh"))
///
/// Implementations: ``SimulatedScheduler`` (virtual clock, simulated device)
/// and ``SystemScheduler`` (wall clock, the machine's real conditions).
///
/// - SeeAlso: <https://developer.apple.com/documentation/backgroundtasks/bgtaskscheduler>
public protocol TaskScheduler: AnyObject, Sendable {
  /// Registers `handler` for `identifier`, under Apple's rules (one handler
  /// per identifier, none after ``finishLaunching()``, a permitted
  /// identifier). Every scheduler implements this one; an app calls the
  /// async ``register(_:handler:)`` (or, ported from `BGTaskScheduler`, the
  /// callback ``register(forTaskWithIdentifier:using:launchHandler:)``),
  /// which make the ``LaunchHandler`` and call it.
  ///
  /// - Returns: `false` when the registration broke a rule (lenient mode);
  ///   strict mode traps instead.
  @discardableResult
  func register(_ identifier: String, _ handler: LaunchHandler) -> Bool

  /// Submits a request, replacing any pending request with the same identifier.
  ///
  /// - Throws: ``SchedulerError/unavailable``, ``SchedulerError/tooManyPendingTaskRequests``,
  ///   ``SchedulerError/notPermitted``, ``SchedulerError/immediateRunIneligible``,
  ///   ``SchedulerError/launchHandlerNotRegistered``.
  func submit(_ request: any TaskRequest) throws(SchedulerError)

  /// Cancels the pending request with this identifier, if any.
  func cancel(taskRequestWithIdentifier identifier: String)

  /// Cancels every pending request.
  func cancelAllTaskRequests()

  /// Copies of the pending requests, ordered by identifier.
  func pendingTaskRequests() async -> [any TaskRequest]

  /// Ends the launch phase: registrations after this break Apple's rules.
  func finishLaunching()
}

extension TaskScheduler {
  /// Registers an async handler: its Swift task is cancelled at expiration and
  /// returning completes the task (successfully unless it threw or was cancelled).
  ///
  /// The form an app calls (Forage's `TaskRunner.register(on:)` registers
  /// each configured task with it): the handler cannot forget to complete
  /// its task, and expiration reaches it as cancellation.
  @discardableResult
  public func register(_ identifier: String, handler: @escaping @Sendable (BackgroundTask) async throws -> Void) -> Bool {
    register(identifier, .async(handler))
  }

  /// Registers Apple's callback-style launch handler for `identifier`, for
  /// code written against `BGTaskScheduler`.
  ///
  /// The handler runs on `queue` (a background queue when `nil`); it must set
  /// `expirationHandler` and call `setTaskCompleted(success:)`.
  /// - Returns: `false` when the registration broke a rule (lenient mode);
  ///   strict mode traps instead.
  @discardableResult
  public func register(
    forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
    launchHandler: @escaping @Sendable (BackgroundTask) -> Void
  ) -> Bool {
    register(identifier, .callback(queue, launchHandler))
  }
}

/// How a scheduler reacts when a caller breaks one of Apple's rules.
public enum RuleEnforcement: String, Sendable, Codable {
  /// Trap with Apple's message, as iOS does.
  case strict
  /// Return `false` or throw, and log the problem.
  case lenient
}

/// Where a scheduler (or Forage's `TaskRunner`) writes what a person should
/// know (rule violations, a request it could not submit…): the caller
/// decides where lines go.
///
///     let log = SchedulerLog { line in logger.warning("\(line)") }
public struct SchedulerLog: Sendable {
  /// Writes one line (without its newline).
  public let write: @Sendable (String) -> Void
  /// Logs through `write`.
  public init(_ write: @escaping @Sendable (String) -> Void) { self.write = write }
  /// Writes lines to standard error, prefixed with `forage scheduler:`.
  public static let standardError = SchedulerLog { line in
    FileHandle.standardError.write(Data("forage scheduler: \(line)\n".utf8))
  }
  /// Discards everything.
  public static let silent = SchedulerLog { _ in }
}

/// The registration rules shared by every scheduler: permitted identifiers,
/// one handler per identifier, all registered before launching finishes, and
/// no submission without a handler. A pure value; the owner traps or logs.
struct TaskRegistry: Sendable {
  /// Permitted identifiers; a trailing `*` matches any suffix (as Apple allows
  /// for continued-processing identifiers). `nil` permits every identifier.
  var permitted: [String]?
  var handlers: [String: LaunchHandler] = [:]
  var launchingFinished = false

  enum Violation: Error, Sendable {
    case afterLaunch(String), duplicate(String), notPermitted(String)
    /// The message, close to the one iOS raises.
    var message: String {
      switch self {
      case .afterLaunch(let id):
        return "All launch handlers must be registered before application finishes launching (identifier \(id))"
      case .duplicate(let id):
        return "Launch handler for task with identifier \(id) has already been registered"
      case .notPermitted(let id):
        return "No launch handler registration permitted for task with identifier \(id): it is not in the permitted identifiers"
      }
    }
  }

  func isPermitted(_ identifier: String) -> Bool {
    guard let permitted else { return true }
    for pattern in permitted {
      if pattern.hasSuffix("*") {
        if identifier.hasPrefix(pattern.dropLast()) { return true }
      } else if pattern == identifier {
        return true
      }
    }
    return false
  }

  mutating func register(_ identifier: String, _ handler: LaunchHandler) -> Violation? {
    if launchingFinished { return .afterLaunch(identifier) }
    if !isPermitted(identifier) { return .notPermitted(identifier) }
    if handlers[identifier] != nil { return .duplicate(identifier) }
    handlers[identifier] = handler
    return nil
  }

  func checkSubmit(_ request: AnyTaskRequest) throws(SchedulerError) {
    let id = request.identifier
    if !isPermitted(id) {
      throw SchedulerError.notPermitted.with(identifier: id, detail: "permitted: \((permitted ?? []).joined(separator: ", "))")
    }
    if handlers[id] == nil {
      throw SchedulerError.launchHandlerNotRegistered.with(identifier: id, detail: "")
    }
  }
}

/// The pending requests and Apple's limits on them: one app-refresh, ten
/// processing; resubmitting an identifier replaces its request.
struct PendingRequests: Sendable, Codable, Hashable {
  /// Ordered by identifier, so iteration is deterministic.
  private(set) var requests: [AnyTaskRequest] = []

  init(_ requests: [AnyTaskRequest] = []) {
    for r in requests { upsert(r) }
  }

  func index(of identifier: String) -> Int? { requests.firstIndex { $0.identifier == identifier } }
  subscript(identifier: String) -> AnyTaskRequest? { index(of: identifier).map { requests[$0] } }
  var isEmpty: Bool { requests.isEmpty }

  /// Inserts or replaces `request`, enforcing the per-kind limits.
  mutating func insert(_ request: AnyTaskRequest, policy: SchedulingPolicy) throws(SchedulerError) {
    if index(of: request.identifier) == nil {
      let sameKind = requests.reduce(0) { $0 + ($1.kind == request.kind ? 1 : 0) }
      let limit: Int? =
        switch request.kind {
        case .appRefresh: policy.maxPendingAppRefreshRequests
        case .processing: policy.maxPendingProcessingRequests
        case .continuedProcessing: nil
        }
      if let limit, sameKind >= limit {
        throw SchedulerError.tooManyPendingTaskRequests.with(
          identifier: request.identifier, detail: "\(sameKind) \(request.kind.rawValue) request(s) already pending")
      }
    }
    upsert(request)
  }

  private mutating func upsert(_ request: AnyTaskRequest) {
    if let i = index(of: request.identifier) {
      requests[i] = request
      return
    }
    let i = requests.firstIndex { $0.identifier > request.identifier } ?? requests.endIndex
    requests.insert(request, at: i)
  }

  @discardableResult
  mutating func remove(_ identifier: String) -> AnyTaskRequest? {
    guard let i = index(of: identifier) else { return nil }
    return requests.remove(at: i)
  }

  mutating func removeAll() { requests.removeAll() }
}

/// Reacts to a registration rule violation: trap (strict) or log (lenient).
func report(_ violation: TaskRegistry.Violation, enforcement: RuleEnforcement, log: SchedulerLog) -> Bool {
  switch enforcement {
  case .strict:
    fatalError("*** Terminating app due to uncaught exception 'NSInternalInconsistencyException', reason: '\(violation.message)'")
  case .lenient:
    log.write(violation.message)
    return false
  }
}
