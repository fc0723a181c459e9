import ForageHTTP
import ForageScheduler
import ForageStore

extension Downloads {
  /// The downloads' share of a scheduled launch, after its crawl (``TaskRunner``
  /// calls it): the enclosures of the launch's feed sources that have
  /// `downloadEnclosures` and were refreshed are queued, then queued downloads are
  /// worked on with what is left of the budget, through the crawl's fetcher (so
  /// they share its per-host slots and delays). A launch whose crawl used up its
  /// budget only queues.
  ///
  /// What a launch starts depends on its kind:
  ///
  /// - processing (and continued processing): any queued download; one cut by the
  ///   budget keeps its bytes and resumes in the next launch;
  /// - app refresh (about 30 s): only *small* ones, those known (from an expected
  ///   size, or from an earlier answer) to have at most
  ///   ``DownloadSettings/smallSize`` bytes left, which fit its budget.
  ///
  /// Failures are logged, never thrown: the crawl's result stands.
  ///
  /// - Parameters:
  ///   - remaining: the time left in the launch (a scheduler's
  ///     `BackgroundTask.remainingBudget`, or `forage run`'s budget).
  ///   - progress: told the bytes done and expected of a continued
  ///     processing launch; nil for other launches.
  static func launch(
    _ task: TaskDefinition, summary: RunSummary, config: ForageConfig, store: any Store, fetcher: Fetcher,
    remaining: @Sendable () -> Duration, progress: (@Sendable (_ completed: Int64, _ total: Int64) -> Void)?,
    log: SchedulerLog
  ) async {
    let downloads = Downloads(store: store, fetcher: fetcher, fetch: config.fetch)
    let refreshed = Set(TaskRunner.refreshedSources(summary))
    for name in task.sources where refreshed.contains(name) {
      guard let source = config.source(named: name), source.downloadEnclosures != nil else { continue }
      do { try await downloads.queueEnclosures(of: source, directory: config.directory) } catch {
        log.write("\(task.id): queueing the enclosures of \(name) failed: \(error)")
      }
    }
    guard !summary.stoppedByBudget, !summary.stoppedOnRequest, !Task.isCancelled else { return }
    let left = remaining() - EngineDefaults.stopMargin
    guard left >= EngineDefaults.minimumBudget else { return }
    let small = task.kind == .appRefresh ? downloads.settings.smallSize : nil
    do {
      let results = try await downloads.work(
        until: .now + left, maxRemaining: small,
        progress: { status in progress?(Int64(status.bytes), Int64(status.total ?? 0)) })
      for (id, result) in results.sorted(by: { $0.key < $1.key }) {
        if case .failed(let error) = result { log.write("\(task.id): download \(id): \(error)") }
      }
    } catch {
      log.write("\(task.id): downloads: \(error)")
    }
  }
}
