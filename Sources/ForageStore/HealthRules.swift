import Foundation

/// A crawl's field coverage as the store keeps it: records read, and per
/// field how many had a value.
package struct Coverage: Sendable, Hashable {
  /// Records the crawl's pages gave (pages read, not kept).
  package var records = 0
  /// Pages read with their records counted.
  package var pages = 0
  /// Pages that were not what they were (``PageExtraction/lost``).
  package var lostPages = 0
  /// Records dropped for a missing `required` field.
  package var dropped = 0
  /// Per field: records with a value.
  package var present: [String: Int] = [:]

  package init(records: Int = 0, pages: Int = 0, lostPages: Int = 0, dropped: Int = 0, present: [String: Int] = [:]) {
    self.records = records
    self.pages = pages
    self.lostPages = lostPages
    self.dropped = dropped
    self.present = present
  }

  /// The share of records with `field`; nil when no record was read.
  package func share(_ field: String) -> Double? {
    records == 0 ? nil : Double(present[field] ?? 0) / Double(records)
  }

  /// These counts with those of `pages`' extraction outcomes added.
  package func adding(_ pages: [PageCommit]) -> Coverage {
    var c = self
    for page in pages {
      guard let e = page.extraction else { continue }
      c.pages += 1
      if e.lost { c.lostPages += 1; continue }
      c.records += e.records
      c.dropped += e.dropped
      for (name, count) in e.fields { c.present[name, default: 0] += count.present }
    }
    return c
  }

  /// The rows a commit adds to its crawls' coverage: per crawl, the totals
  /// (field `""`: records, pages, lost pages, dropped) and each field's
  /// present, missing and empty counts.
  package static func rows(of pages: [PageCommit]) -> [CoverageRow] {
    var rows: [CoverageKey: CoverageRow] = [:]
    var order: [CoverageKey] = []
    func add(_ row: CoverageRow) {
      let key = CoverageKey(crawl: row.crawl, field: row.field)
      if var known = rows[key] {
        known.records += row.records
        known.present += row.present
        known.missing += row.missing
        known.empty += row.empty
        rows[key] = known
      } else {
        rows[key] = row
        order.append(key)
      }
    }
    for page in pages {
      guard let e = page.extraction else { continue }
      let crawl = page.item.crawl
      add(CoverageRow(
        crawl: crawl, field: "", records: e.lost ? 0 : e.records, present: 1, missing: e.lost ? 0 : e.dropped,
        empty: e.lost ? 1 : 0))
      if e.lost { continue }
      for (name, count) in e.fields.sorted(by: { $0.key < $1.key }) {
        add(CoverageRow(
          crawl: crawl, field: name, records: e.records, present: count.present, missing: count.missing,
          empty: count.empty))
      }
    }
    return order.map { rows[$0]! }
  }

  /// Coverage from stored rows of one crawl (see ``rows(of:)``).
  package init(rows: [CoverageRow]) {
    self.init()
    for row in rows {
      if row.field.isEmpty {
        records = row.records
        pages = row.present
        lostPages = row.empty
        dropped = row.missing
      } else {
        present[row.field] = row.present
      }
    }
  }
}

struct CoverageKey: Hashable {
  var crawl: Int64
  var field: String
}

/// A row of the `crawl_fields` table. The totals row (field `""`) keeps the
/// records read in `records`, pages in `present`, dropped records in
/// `missing` and lost pages in `empty`.
package struct CoverageRow: Sendable, Hashable {
  package var crawl: Int64
  package var field: String
  package var records: Int
  package var present: Int
  package var missing: Int
  package var empty: Int

  package init(crawl: Int64, field: String, records: Int, present: Int, missing: Int, empty: Int) {
    self.crawl = crawl
    self.field = field
    self.records = records
    self.present = present
    self.missing = missing
    self.empty = empty
  }
}

/// A change held back, as the store keeps it until a healthy crawl drops it
/// or the user's acceptance applies it.
package struct HeldChange: Sendable, Hashable {
  package enum Kind: String, Sendable, Hashable { case removed, changed }
  package var record: Int64
  package var source: String
  package var key: String
  package var url: String
  package var kind: Kind
  /// The record's fields when it was held.
  package var before: String
  /// The fields the change would write (changed only).
  package var after: String?
  package var contentHash: UInt64?
  package var crawl: Int64

  package init(
    record: Int64, source: String, key: String, url: String, kind: Kind, before: String, after: String?,
    contentHash: UInt64?, crawl: Int64
  ) {
    self.record = record
    self.source = source
    self.key = key
    self.url = url
    self.kind = kind
    self.before = before
    self.after = after
    self.contentHash = contentHash
    self.crawl = crawl
  }
}

/// The rules of extraction health, as pure functions over what a store
/// read: which field losses a commit holds, and what a completing crawl
/// applies, holds, opens or closes. Both stores call them inside the
/// transaction that writes their outcome.
package enum HealthRules {
  // MARK: Fields

  /// The names of the fields with a value in a record's fields (JSON
  /// object text): not null, not an empty string or list.
  package static func presentFields(_ json: String) -> Set<String> {
    guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return [] }
    var names = Set<String>()
    for (name, value) in object where hasValue(value) { names.insert(name) }
    return names
  }

  static func hasValue(_ value: Any) -> Bool {
    if value is NSNull { return false }
    if let s = value as? String { return !s.isEmpty }
    if let a = value as? [Any] { return !a.isEmpty }
    return true
  }

  /// The fields `before` had a value for and `after` has not.
  package static func lostFields(before: String, after: String) -> [String] {
    presentFields(before).subtracting(presentFields(after)).sorted()
  }

  /// Whether a change that loses `field` is held: an open episode holds
  /// its field's losses; otherwise the field must have been watched (at
  /// least `watchedCoverage` of the last healthy crawl's records) and the
  /// crawl's running coverage, this commit included, below
  /// `collapsedCoverage`. Held at commit, it is settled when the crawl
  /// completes: applied if the crawl's final coverage did not collapse.
  package static func holdsLoss(
    of field: String, policy: HealthPolicy, healthy: Coverage?, running: Coverage, openSubject: String?
  ) -> Bool {
    guard policy.enabled else { return false }
    if let openSubject, openSubject == subject(field: field, policy: policy) { return true }
    guard let healthy, let before = healthy.share(field), before >= policy.watchedCoverage else { return false }
    guard let now = running.share(field) else { return false }
    return now < policy.collapsedCoverage
  }

  /// How an episode names a field: `price (.price)`.
  package static func subject(field: String, policy: HealthPolicy) -> String {
    policy.fieldSelectors[field].map { "\(field) (\($0))" } ?? field
  }

  /// The fields whose coverage collapsed in a completed crawl against the
  /// last healthy one, sorted: watched before, below `collapsedCoverage`
  /// now, over enough records read (`minRecords`, or all the healthy crawl
  /// read when that is fewer).
  package static func collapsedFields(now: Coverage, healthy: Coverage?, policy: HealthPolicy) -> [String] {
    guard policy.enabled, let healthy, healthy.records > 0 else { return [] }
    guard now.records >= min(policy.minRecords, healthy.records), now.records > 0 else { return [] }
    return healthy.present.keys.sorted().filter { field in
      guard let before = healthy.share(field), before >= policy.watchedCoverage else { return false }
      return (now.share(field) ?? 0) < policy.collapsedCoverage
    }
  }

  // MARK: Completing a crawl

  /// A record a completing crawl did not see, with what its page did.
  package struct Candidate: Sendable, Hashable {
    package var record: RecordRules.RemovalCandidate
    /// Its page answered 404 or 410 in this crawl: a real removal.
    package var pageGone: Bool
    /// Its page was lost in this crawl (kept, but not what it was).
    package var pageLost: Bool

    package init(record: RecordRules.RemovalCandidate, pageGone: Bool, pageLost: Bool) {
      self.record = record
      self.pageGone = pageGone
      self.pageLost = pageLost
    }
  }

  /// What a completing crawl does with its removals and its episode.
  package struct Assessment: Sendable, Hashable {
    /// Records removed now.
    package var remove: [RecordRules.RemovalCandidate] = []
    /// Records whose removal is held (with those of lost pages).
    package var hold: [RecordRules.RemovalCandidate] = []
    /// The crawl would hold nothing: it is the source's new baseline.
    package var healthy = true
    /// The episode to open when none is open (nil when healthy).
    package var opens: HealthEpisode? = nil
    /// Fields whose coverage collapsed.
    package var collapsed: [String] = []
  }

  /// Decides a completing crawl: which unseen records go, which are held,
  /// and whether the source is healthy.
  ///
  /// - removals on pages that answered 404 or 410 always go;
  /// - the others, with the records of pages that were lost, are
  ///   suspicious: when they are at least `minRemoved` and more than
  ///   `removedShare` of the source's `current` records, the crawl is
  ///   unhealthy;
  /// - so it is when a field's coverage collapsed (``collapsedFields(now:healthy:policy:)``);
  /// - an unhealthy crawl, or one while an episode is open and the crawl
  ///   is not healthy, holds every suspicious removal; a healthy one applies them.
  package static func assess(
    _ candidates: [Candidate], source: String, crawl: Int64, capped: Bool, current: Int, coverage: Coverage,
    healthy: Coverage?, policy: HealthPolicy, now: Date
  ) -> Assessment {
    var out = Assessment()
    var suspicious: [RecordRules.RemovalCandidate] = []
    var lost: [RecordRules.RemovalCandidate] = []
    for c in candidates {
      let r = c.record
      if c.pageLost {
        if !r.removed, let seen = r.seenCrawl, seen < crawl { lost.append(r) }
        continue
      }
      guard RecordRules.removes(r, crawl: crawl, capped: capped) else { continue }
      if c.pageGone || !policy.enabled { out.remove.append(r) } else { suspicious.append(r) }
    }
    let held = suspicious.count + lost.count
    let tooMany = policy.enabled && held >= policy.minRemoved && Double(held) > policy.removedShare * Double(current)
    out.collapsed = collapsedFields(now: coverage, healthy: healthy, policy: policy)
    out.healthy = !tooMany && out.collapsed.isEmpty
    if out.healthy {
      out.remove += suspicious
      return out
    }
    out.hold = suspicious + lost
    let examples = Array(Set((tooMany ? out.hold : []).map(\.url))).sorted().prefix(3)
    if tooMany {
      let pages = lost.count > suspicious.count
      out.opens = HealthEpisode(
        id: 0, source: source, kind: pages ? .pages : .removals,
        subject: policy.recordSelector ?? "the source's records", before: current, beforeTotal: current,
        now: current - held, nowTotal: current, examples: Array(examples), startedAt: now, startCrawl: crawl)
    } else if let field = out.collapsed.first, let healthy {
      out.opens = HealthEpisode(
        id: 0, source: source, kind: .field, subject: subject(field: field, policy: policy),
        before: healthy.present[field] ?? 0, beforeTotal: healthy.records, now: coverage.present[field] ?? 0,
        nowTotal: coverage.records, examples: [], startedAt: now, startCrawl: crawl)
    }
    return out
  }
}

/// The part of a commit both stores share: which planned changes lose a
/// field that is held, and the plan without them.
package enum HealthCommit {
  /// Holds the planned `changed` changes of `plan` that lose a field
  /// ``HealthRules/holdsLoss(of:policy:healthy:running:openSubject:)`` holds:
  /// the change is taken out of the plan, the record's update keeps only
  /// its sighting, and `write` keeps the held changes. `state(source,
  /// crawl)` reads the last healthy coverage, the open field episode's
  /// subject and the crawl's stored running coverage; it is called only
  /// for a source with a change that loses a field. Returns how many were held.
  package static func hold(
    _ pages: [PageCommit], plan: inout RecordPlan, stored: [RecordKey: StoredRecordRow],
    state: (String, Int64) throws -> (healthy: Coverage?, openSubject: String?, running: Coverage),
    write: ([HeldChange]) throws -> Void
  ) throws -> Int {
    // Only a `changed` change can lose a field: a batch without one (every
    // batch of a first crawl, nearly every one of a recrawl) is not looked
    // at record by record.
    guard plan.changes.contains(where: { $0.change.kind == .changed }) else { return 0 }
    var policies: [String: HealthPolicy] = [:]
    var crawls: [RecordKey: Int64] = [:]
    for page in pages {
      guard let policy = page.health, policy.enabled else { continue }
      for record in page.records {
        if policies[record.source] == nil { policies[record.source] = policy }
        crawls[RecordKey(record)] = page.item.crawl
      }
    }
    guard !policies.isEmpty else { return 0 }
    struct State {
      var healthy: Coverage?
      var openSubject: String?
      var running: Coverage
    }
    var states: [String: State] = [:]
    var held: [HeldChange] = []
    var heldIDs: [Int64: UInt64] = [:]
    var kept: [RecordPlan.PlannedChange] = []
    for planned in plan.changes {
      let change = planned.change
      let key = RecordKey(source: change.source, key: change.key)
      guard change.kind == .changed, let policy = policies[change.source], let crawl = crawls[key],
        let row = stored[key], let before = change.beforeJSON, let after = change.afterJSON
      else {
        kept.append(planned)
        continue
      }
      let lost = HealthRules.lostFields(before: before, after: after)
      if lost.isEmpty {
        kept.append(planned)
        continue
      }
      let s: State
      if let known = states[change.source] {
        s = known
      } else {
        let read = try state(change.source, crawl)
        let batch = pages.filter { $0.item.crawl == crawl }
        s = State(healthy: read.healthy, openSubject: read.openSubject, running: read.running.adding(batch))
        states[change.source] = s
      }
      let holds = lost.contains {
        HealthRules.holdsLoss(of: $0, policy: policy, healthy: s.healthy, running: s.running, openSubject: s.openSubject)
      }
      guard holds else {
        kept.append(planned)
        continue
      }
      held.append(HeldChange(
        record: row.id, source: change.source, key: change.key, url: change.url, kind: .changed, before: before,
        after: after, contentHash: plan.updates.first { $0.id == row.id }?.contentHash, crawl: crawl))
      heldIDs[row.id] = row.contentHash
    }
    guard !held.isEmpty else { return 0 }
    plan.changes = kept
    plan.changedRecords -= held.count
    plan.unchangedRecords += held.count
    for i in plan.updates.indices {
      guard let hash = heldIDs[plan.updates[i].id] else { continue }
      plan.updates[i].fieldsJSON = nil
      plan.updates[i].contentHash = hash
    }
    try write(held)
    return held.count
  }
}
