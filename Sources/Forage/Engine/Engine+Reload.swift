import Foundation
import ForageScheduler

/// What a daemon's config reload changed, task by task (the log line of a
/// SIGHUP).
///
///     let change = DaemonConfigChange(from: old, to: new)
///     print(change.summary)   // "tasks added: t.new; removed: t.old; changed: t.daily"
public struct DaemonConfigChange: Sendable, Hashable {
  /// Tasks of the new config only: submitted, due at once.
  public var added: [String]
  /// Tasks of the old config only: their pending requests are cancelled (a
  /// launch of one running now finishes).
  public var removed: [String]
  /// Tasks of both whose definition changed (interval, budget, sources,
  /// kind…), or whose sources' definitions changed: their next launches run
  /// the new definition; their pending requests are kept.
  public var changed: [String]
  /// Sources added, removed or changed, by name.
  public var sources: [String]

  /// The changes from `old` to `new`, each list in the new (or, for the
  /// removed ones, the old) config's order.
  public init(from old: ForageConfig, to new: ForageConfig) {
    let oldTasks = Dictionary(old.tasks.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    let newIDs = Set(new.tasks.map(\.id))
    var sources: [String] = []
    for source in new.sources where old.source(named: source.name) != source { sources.append(source.name) }
    for source in old.sources where new.source(named: source.name) == nil { sources.append(source.name) }
    self.sources = sources
    added = new.tasks.filter { oldTasks[$0.id] == nil }.map(\.id)
    removed = old.tasks.filter { !newIDs.contains($0.id) }.map(\.id)
    changed = new.tasks.filter { task in
      guard let before = oldTasks[task.id] else { return false }
      return before != task || task.sources.contains { sources.contains($0) }
        || old.fetch != new.fetch || old.notify != new.notify
    }.map(\.id)
  }

  /// True when the reload changed nothing the daemon runs.
  public var isEmpty: Bool { added.isEmpty && removed.isEmpty && changed.isEmpty && sources.isEmpty }

  /// One line for the log: `tasks added: a; removed: b; changed: c`, or
  /// `nothing changed`.
  public var summary: String {
    var parts: [String] = []
    if !added.isEmpty { parts.append("added: " + added.joined(separator: ", ")) }
    if !removed.isEmpty { parts.append("removed: " + removed.joined(separator: ", ")) }
    if !changed.isEmpty { parts.append("changed: " + changed.joined(separator: ", ")) }
    if parts.isEmpty { return sources.isEmpty ? "nothing changed" : "sources changed: " + sources.joined(separator: ", ") }
    return "tasks " + parts.joined(separator: "; ")
  }
}

extension TaskRunner {
  /// A launch handler for every task of the config, for a scheduler that
  /// replaces its tasks while running (``SystemScheduler/replaceTasks(handlers:policy:)``).
  func handlers(on scheduler: any TaskScheduler) -> [String: LaunchHandler] {
    var handlers: [String: LaunchHandler] = [:]
    for task in config.tasks {
      handlers[task.id] = .async { background in
        try await self.launch(task, background, scheduler: scheduler, now: Date())
      }
    }
    return handlers
  }

  /// This runner with another config (same store, transport and callbacks).
  func with(config: ForageConfig) -> TaskRunner {
    var runner = TaskRunner(
      config: config, store: store, transport: transport, log: log, onFinish: onFinish, now: now,
      progress: progress, localNotifications: localNotifications)
    runner.launchOwner = launchOwner
    runner.onLaunchSkipped = onLaunchSkipped
    return runner
  }
}
