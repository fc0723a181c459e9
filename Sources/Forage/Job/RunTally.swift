import Foundation
import ForageScheduler
import ForageStore

/// A page as a launch counts it: by how it ended, into the launch's totals
/// and into its source's figures.
protocol LaunchPage: Sendable {
  /// Counts this page into the launch's totals.
  func count(into summary: inout RunSummary)
  /// Counts this page into its source's figures.
  func count(into source: inout SourceRunSummary)
}

/// What one commit wrote, in the terms a launch counts: the store's answer
/// to a batch of pages, made by the ``Job`` from the store's result.
struct CommitCounts: Sendable, Hashable {
  /// New frontier entries (links) the commit added.
  var linksAdded = 0
  var newRecords = 0
  var changedRecords = 0
  var unchangedRecords = 0
  var restoredRecords = 0
  /// Notifications written to the outbox.
  var notifications = 0
  /// The changes written, as their source's name and kind.
  var changes: [Change] = []

  /// One change of a record.
  struct Change: Sendable, Hashable {
    var source: String
    var kind: ChangeKind
  }
}

/// What completing one source's crawl wrote.
struct CompletionCounts: Sendable, Hashable {
  /// Records the crawl did not see again, marked removed.
  var removed = 0
  /// Notifications written to the outbox.
  var notifications = 0
  /// What the source's health says, when it changed or holds anything
  /// (an episode opened or ended, removals held): a warning of the run.
  var health: String? = nil
}

/// The running totals of a launch, kept by its ``LaunchMachine`` as commits
/// and crawl completions arrive; ``summary(outcome:)`` is the launch's
/// ``RunSummary``.
///
/// Pages count when their commit lands (a page whose commit failed was not
/// stored, and is not counted); a page's records count as unchanged until
/// the commit's changes say they are new, changed or restored.
struct RunTally: Sendable {
  /// The totals and per-source figures so far, in a summary's shape (what
  /// a progress report and the run's row show).
  private(set) var totals = RunSummary()

  /// A tally of a launch of `sources` (names, in lane order).
  init(sources: [String], conditions: DeviceConditions? = nil) {
    totals.sources = sources.map { SourceRunSummary(name: $0) }
    totals.conditions = conditions
  }

  /// Adds a warning (the launch's own, not a page's).
  mutating func warn(_ message: String) {
    totals.warn(message)
  }

  /// Counts a batch of pages whose commit landed, and what it wrote.
  mutating func count<Page: LaunchPage>(_ batch: [(lane: Int, page: Page)], committed counts: CommitCounts) {
    for (lane, page) in batch {
      page.count(into: &totals)
      page.count(into: &totals.sources[lane])
    }
    totals.recordsNew += counts.newRecords
    totals.recordsChanged += counts.changedRecords
    totals.recordsUnchanged += counts.unchangedRecords
    totals.recordsRestored += counts.restoredRecords
    totals.notificationsQueued += counts.notifications
    for change in counts.changes {
      guard let i = totals.sources.firstIndex(where: { $0.name == change.source }) else { continue }
      switch change.kind {
      case .new: totals.sources[i].recordsNew += 1
      case .changed: totals.sources[i].recordsChanged += 1
      case .restored: totals.sources[i].recordsRestored += 1
      case .removed: continue
      }
      totals.sources[i].recordsUnchanged -= 1
    }
  }

  /// Counts the completion of `lane`'s crawl.
  mutating func count(completedLane lane: Int, _ counts: CompletionCounts) {
    totals.completedSources.append(totals.sources[lane].name)
    totals.sources[lane].completed = true
    totals.recordsRemoved += counts.removed
    totals.sources[lane].recordsRemoved += counts.removed
    totals.notificationsQueued += counts.notifications
    if let health = counts.health { totals.warn("\(totals.sources[lane].name): \(health)") }
  }

  /// Counts what the notification deliveries of the launch did.
  mutating func count(delivered: Int, failed: Int) {
    totals.notificationsDelivered += delivered
    totals.notificationsFailed += failed
  }

  /// True when every source of the launch completed its crawl.
  var everyCrawlCompleted: Bool { totals.completedSources.count == totals.sources.count }

  /// The launch's summary, ended with `outcome` (its time and date are the
  /// caller's to set).
  func summary(outcome: RunOutcome) -> RunSummary {
    var summary = totals
    summary.outcome = outcome
    return summary
  }
}
