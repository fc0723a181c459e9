import ForageSupport

/// The completion handlers the system hands an app for a background
/// session's events, each called once the session delivered them all and the
/// work they started (putting finished files in place) is done: calling it
/// earlier lets the system suspend the app in the middle of that work.
///
///     events.keep(completionHandler, forSession: identifier)   // app delegate
///     events.track(forSession: identifier) { await finish(file) } // each finished task
///     await events.finishedEvents(forSession: identifier)       // urlSessionDidFinishEvents
///
/// The handler and the end of the events may come in either order: the
/// handler is called when both are there (and the work is done), once.
public final class BackgroundSessionEvents: Sendable {
  private struct Session {
    var handler: (@Sendable () -> Void)?
    var finished = false
    var work: [Int: Task<Void, Never>] = [:]
  }

  private struct State {
    var sessions: [String: Session] = [:]
    var nextWork = 0
  }

  private let state = Locked(State())

  /// Creates an empty set.
  public init() {}

  /// Keeps the system's completion handler for the session `identifier`
  /// (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`);
  /// called now when the session already delivered its events.
  public func keep(_ handler: @escaping @Sendable () -> Void, forSession identifier: String) {
    let ready = state.withLock { s -> Bool in
      s.sessions[identifier, default: Session()].handler = handler
      return s.sessions[identifier]!.finished && s.sessions[identifier]!.work.isEmpty
    }
    if ready { callHandler(identifier) }
  }

  /// Runs `work` for an event of the session `identifier`; its completion
  /// handler waits for it.
  public func track(forSession identifier: String, _ work: @escaping @Sendable () async -> Void) {
    state.withLock { s in
      s.nextWork += 1
      let id = s.nextWork
      s.sessions[identifier, default: Session()].work[id] = Task {
        await work()
        self.workEnded(id, identifier)
      }
    }
  }

  /// The session delivered every event (`urlSessionDidFinishEvents(forBackgroundURLSession:)`):
  /// once its tracked work is done, its kept handler is called. Returns when
  /// the work is done.
  public func finishedEvents(forSession identifier: String) async {
    let work = state.withLock { s -> [Task<Void, Never>] in
      s.sessions[identifier, default: Session()].finished = true
      return Array(s.sessions[identifier]!.work.values)
    }
    for task in work { await task.value }
    let ready = state.withLock { s in s.sessions[identifier].map { $0.finished && $0.work.isEmpty } ?? false }
    if ready { callHandler(identifier) }
  }

  /// Whether a handler is kept, not yet called, for `identifier`.
  public func isWaiting(forSession identifier: String) -> Bool {
    state.withLock { $0.sessions[identifier]?.handler != nil }
  }

  /// How many tracked works of the session `identifier` are still running
  /// (tests wait for none, rather than for some time).
  package func runningWork(forSession identifier: String) -> Int {
    state.withLock { $0.sessions[identifier]?.work.count ?? 0 }
  }

  private func workEnded(_ id: Int, _ identifier: String) {
    let ready = state.withLock { s -> Bool in
      s.sessions[identifier]?.work[id] = nil
      return s.sessions[identifier].map { $0.finished && $0.work.isEmpty } ?? false
    }
    if ready { callHandler(identifier) }
  }

  /// Calls the kept handler once, and forgets the session's events.
  private func callHandler(_ identifier: String) {
    let handler = state.withLock { s -> (@Sendable () -> Void)? in
      guard let session = s.sessions[identifier], let handler = session.handler, session.finished, session.work.isEmpty
      else { return nil }
      s.sessions[identifier] = nil
      return handler
    }
    handler?()
  }
}
