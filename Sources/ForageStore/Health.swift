import Foundation

/// What one fetched page gave its source's extraction: how many records,
/// whether the source's record selector matched, and for each field how
/// many records had it, lacked it or had it empty. Carried on
/// ``PageCommit/extraction``; the store adds it to its crawl's running
/// field coverage in the page's commit.
///
///     var e = PageExtraction(records: 2, matched: true)
///     e.fields["price"] = .init(present: 1, missing: 1, empty: 0)
public struct PageExtraction: Sendable, Hashable {
  /// How many records of a field had a value, had none, or had an empty one.
  public struct FieldCount: Sendable, Hashable {
    /// Records with a value (not null, not an empty string or list).
    public var present = 0
    /// Records without one (nothing matched, or it did not convert).
    public var missing = 0
    /// Records whose value is an empty string or an empty list.
    public var empty = 0
    /// Counts of a field; zero when not given.
    public init(present: Int = 0, missing: Int = 0, empty: Int = 0) {
      self.present = present
      self.missing = missing
      self.empty = empty
    }
  }

  /// Records the page gave (stored ones; dropped ones are not counted).
  public var records: Int
  /// The source's `match` and `items` selectors found something (true for
  /// a source without them).
  public var matched: Bool
  /// Per field, by name.
  public var fields: [String: FieldCount]
  /// Records dropped because a `required` field had no value.
  public var dropped: Int
  /// The page answered 2xx with markup, gave records before, and none of
  /// the source's selectors found anything now (a block page, a consent
  /// wall, a login redirect): its records were kept as they were.
  public var lost: Bool

  /// An outcome; each parameter has its property's meaning.
  public init(
    records: Int, matched: Bool, fields: [String: FieldCount] = [:], dropped: Int = 0, lost: Bool = false
  ) {
    self.records = records
    self.matched = matched
    self.fields = fields
    self.dropped = dropped
    self.lost = lost
  }
}

/// When a crawl's changes are suspicious enough to be held, not applied
/// (a source's `health` in the config). The rules are ``HealthRules``'s.
///
/// - A completing crawl that would remove more than ``removedShare`` of the
///   source's records, and at least ``minRemoved`` of them, holds them
///   (records on pages answering 404 or 410 are always removed).
/// - A field on at least ``watchedCoverage`` of the records of the last
///   healthy crawl that falls below ``collapsedCoverage`` is collapsed: the
///   changes that lose it are held.
public struct HealthPolicy: Sendable, Hashable {
  /// False turns holding off: every change is applied as it comes.
  public var enabled = true
  /// Share of the source's records a crawl may remove before it is held.
  public var removedShare = 0.5
  /// The fewest removals that can be held.
  public var minRemoved = 3
  /// A field this common on the last healthy crawl is watched.
  public var watchedCoverage = 0.8
  /// A watched field below this share of the records has collapsed.
  public var collapsedCoverage = 0.5
  /// A crawl's coverage is judged once it read this many records (or as
  /// many as the last healthy crawl, when that read fewer).
  public var minRecords = 3
  /// The source's record selector (`match`, or `items`), named in episodes.
  public var recordSelector: String? = nil
  /// Each field's selector, by field name, named in episodes.
  public var fieldSelectors: [String: String] = [:]

  /// The defaults, as documented in docs/configuration.md.
  public init() {}
}

/// A spell during which a source's changes are held (see ``HealthRules``),
/// from the crawl that found it unhealthy to a healthy crawl or the user's
/// acceptance (`forage health accept`).
public struct HealthEpisode: Sendable, Hashable {
  /// What looked wrong.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// A crawl would have removed too many records.
    case removals
    /// Pages answered 2xx with markup where none of the selectors matched.
    case pages
    /// A field's coverage collapsed.
    case field
  }
  /// How it ended.
  public enum Resolution: String, Sendable, Hashable, CaseIterable {
    /// A crawl completed healthy.
    case recovered
    /// The user accepted the held changes.
    case accepted
  }

  /// Its identifier in the store.
  public var id: Int64
  /// The source held.
  public var source: String
  /// What looked wrong.
  public var kind: Kind
  /// The selector or field concerned (`div.product`, `price (.price)`).
  public var subject: String
  /// Records (for a field: records with the field) before, out of `beforeTotal`.
  public var before: Int
  /// Records considered before.
  public var beforeTotal: Int
  /// Records (for a field: records with it) the unhealthy crawl left, out of `nowTotal`.
  public var now: Int
  /// Records the unhealthy crawl read.
  public var nowTotal: Int
  /// A few page URLs showing it.
  public var examples: [String]
  /// When it started (the unhealthy crawl's completion).
  public var startedAt: Date
  /// The crawl that found the source unhealthy (its completion opened the
  /// episode); 0 for an episode not from a store.
  public var startCrawl: Int64
  /// When it ended; nil while open.
  public var endedAt: Date?
  /// The crawl it ended at: the healthy crawl of a recovery; for an
  /// acceptance, the source's last completed crawl, which the acceptance
  /// came after. Nil while open (and for an episode not from a store).
  public var endCrawl: Int64?
  /// How it ended; nil while open.
  public var resolution: Resolution?
  /// Changes held so far (removals and field losses).
  public var held: Int

  /// An episode; each parameter has its property's meaning.
  public init(
    id: Int64, source: String, kind: Kind, subject: String, before: Int, beforeTotal: Int, now: Int, nowTotal: Int,
    examples: [String], startedAt: Date, startCrawl: Int64 = 0, endedAt: Date? = nil, endCrawl: Int64? = nil,
    resolution: Resolution? = nil, held: Int = 0
  ) {
    self.id = id
    self.source = source
    self.kind = kind
    self.subject = subject
    self.before = before
    self.beforeTotal = beforeTotal
    self.now = now
    self.nowTotal = nowTotal
    self.examples = examples
    self.startedAt = startedAt
    self.startCrawl = startCrawl
    self.endedAt = endedAt
    self.endCrawl = endCrawl
    self.resolution = resolution
    self.held = held
  }

  /// True while its changes are held.
  public var isOpen: Bool { endedAt == nil }

  /// The evidence in a sentence: "div.product: 6 records before, 0 now".
  public var evidence: String {
    switch kind {
    case .removals:
      return "\(subject): \(before) records before, \(now) would remain"
    case .pages:
      return "\(subject): \(before) records before; pages that gave \(before - now) of them no longer match any selector"
    case .field:
      return "\(subject): on \(before) of \(beforeTotal) records before, \(now) of \(nowTotal) now"
    }
  }
}

/// A source event the outbox delivers beside record changes.
public struct SourceEvent: Sendable, Hashable {
  /// What happened.
  public enum Kind: String, Sendable, Hashable, CaseIterable {
    /// An episode started: the source's changes are held.
    case unhealthy = "source.unhealthy"
    /// It ended: a healthy crawl, or the user's acceptance.
    case recovered = "source.recovered"
  }
  /// What happened.
  public var kind: Kind
  /// The episode it tells of, as it stood when the notification was read.
  public var episode: HealthEpisode

  /// An event of `kind` about `episode`.
  public init(kind: Kind, episode: HealthEpisode) {
    self.kind = kind
    self.episode = episode
  }
}

/// What ``HealthStore/acceptHeldChanges(source:router:now:)`` applied.
public struct HealthAcceptance: Sendable, Hashable {
  /// The episode, now ended.
  public var episode: HealthEpisode
  /// The changes written (held removals and field losses, applied).
  public var changes: [RecordChange]
  /// Notifications written to the outbox (the changes' and `source.recovered`).
  public var notifications: Int

  /// An acceptance; each parameter has its property's meaning.
  public init(episode: HealthEpisode, changes: [RecordChange], notifications: Int) {
    self.episode = episode
    self.changes = changes
    self.notifications = notifications
  }
}
