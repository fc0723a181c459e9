import Foundation
import ForageStore

extension Engine {
  /// The notifier of this engine's config and store (nil when the config
  /// has no channels).
  ///
  /// - Parameter environment: where webhook secrets are read.
  public func notifier(environment: [String: String] = ProcessInfo.processInfo.environment) -> Notifier? {
    config.notify.isEmpty ? nil : Notifier(config: config, store: store, transport: transport, environment: environment)
  }

  /// Delivers the notifications due now (see ``Notifier/deliverDue()``).
  /// Claims left by a killed process are released first: their
  /// notifications go again, with the same ids.
  ///
  /// - Throws: store errors.
  public func deliverNotifications() async throws -> Notifier.Report {
    guard let notifier = notifier() else { return Notifier.Report() }
    try await store.release(.notification, owner: nil)
    return try await notifier.deliverDue()
  }

  /// The maintenance step: drops change history past each source's
  /// `history` retention (never a change with a notification still pending).
  /// The daemon and processing tasks run it, never a refresh's budget.
  ///
  /// - Returns: how many changes were dropped.
  /// - Throws: store errors (nothing is dropped then).
  @discardableResult
  public func pruneHistory(now: Date = Date()) async throws -> Int {
    let retention = config.historyRetention
    guard !retention.isEmpty else { return 0 }
    return try await store.pruneHistory(retention, now: now)
  }
}

extension ForageConfig {
  /// Each source's `history` retention, by source name (sources without one
  /// keep their whole history and are left out).
  public var historyRetention: [String: HistoryRetention] {
    var retention: [String: HistoryRetention] = [:]
    for source in sources { if let rule = source.history { retention[source.name] = rule } }
    return retention
  }
}
