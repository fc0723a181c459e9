import Foundation
import ForageSupport

/// A stored record's row as a commit reads it: what the record rules compare.
package struct StoredRecordRow: Sendable, Hashable {
  /// The record's identifier in the store.
  package var id: Int64
  /// The hash of its stored fields.
  package var contentHash: UInt64
  /// Its stored fields, as canonical JSON text.
  package var fields: String
  /// A completed crawl removed it (`removed_at` is set).
  package var removed: Bool

  /// A stored row; each parameter has its property's meaning.
  package init(id: Int64, contentHash: UInt64, fields: String, removed: Bool) {
    self.id = id
    self.contentHash = contentHash
    self.fields = fields
    self.removed = removed
  }
}

/// What a commit writes for its records, decided with no database: the rows
/// to insert, the stored rows to update, and the changes (in page order)
/// with the channels each goes to.
///
///     let stored = try read(rowsOf: RecordRules.keys(of: pages))   // the store reads
///     var plan = RecordRules.plan(pages, stored: stored)            // the rules decide
///     plan.route(firstCrawl: { try !hasCompletedCrawl($0) })         // and route
///     try write(plan)                                                // the store writes
///
/// A record a batch gives twice is planned once: the second sighting is
/// compared with the first (new then changed, say), and the row written is
/// the one the batch leaves.
package struct RecordPlan: Sendable {
  /// The row of a record the store lacks, as the batch leaves it.
  package struct Insert: Sendable, Hashable {
    /// The record's last sighting in the batch (its fields, URL).
    package var record: RecordInput
    /// When the batch first saw it.
    package var firstSeen: Date
    /// When the batch last saw it.
    package var lastSeen: Date
    /// The fingerprint of the page that last gave it.
    package var page: UInt64
    /// The crawl that last saw it.
    package var crawl: Int64
  }

  /// What to write to a stored record's row.
  package struct Update: Sendable, Hashable {
    /// The row's identifier.
    package var id: Int64
    /// The page URL it was last seen on.
    package var url: String
    /// Its new fields; nil when they are those stored (only the sighting
    /// is written). A row given fields is also no longer removed.
    package var fieldsJSON: String?
    /// The hash of its fields (unchanged when `fieldsJSON` is nil).
    package var contentHash: UInt64
    /// When the batch last saw it.
    package var lastSeen: Date
    /// The fingerprint of the page that last gave it.
    package var page: UInt64
    /// The crawl that last saw it.
    package var crawl: Int64
  }

  /// A change to write, with the router of the page that made it and the
  /// channels it was routed to (`route(firstCrawl:)`).
  package struct PlannedChange: Sendable {
    /// The change; its `id` is 0 until the store writes it.
    package var change: RecordChange
    /// Decides its channels; nil writes no notification.
    package var router: (any ChangeRouter)?
    /// The channels it goes to, once routed.
    package var channels: [String] = []
  }

  /// Rows of records the store lacks, in the order the batch first gave them.
  package var inserts: [Insert] = []
  /// Stored rows to update (fields changed, back after a removal, or only
  /// seen again), in the order the batch first gave them.
  package var updates: [Update] = []
  /// The changes, in the order the batch made them.
  package var changes: [PlannedChange] = []
  /// How many records were new, changed, unchanged and restored.
  package var newRecords = 0, changedRecords = 0, unchangedRecords = 0, restoredRecords = 0

  /// The notifications the routed changes ask for.
  package var notificationCount: Int { changes.reduce(0) { $0 + $1.channels.count } }

  /// Asks each change's router for its channels; `firstCrawl(source)` tells
  /// whether the source has no completed crawl yet, and is asked once per
  /// source, only when a change of it has a router.
  package mutating func route(firstCrawl: (String) throws -> Bool) rethrows {
    var known: [String: Bool] = [:]
    for i in changes.indices {
      guard let router = changes[i].router else { continue }
      let source = changes[i].change.source
      let first: Bool
      if let cached = known[source] {
        first = cached
      } else {
        first = try firstCrawl(source)
        known[source] = first
      }
      changes[i].channels = router.channels(for: changes[i].change, firstCrawl: first)
    }
  }
}

/// The rules of a record's life, as pure functions over what a store read:
/// whether a record a page gives is new, changed, unchanged or restored;
/// when a crawl completes; which records its completion removes.
///
/// The stores call them between their read and their write, inside one
/// transaction (`read; decide; write`), and own no rule themselves.
package enum RecordRules {
  /// The distinct record keys of `pages`, in the order first given: the
  /// rows a commit reads before it plans.
  package static func keys(of pages: [PageCommit]) -> [RecordKey] {
    var seen = Set<RecordKey>()
    var keys: [RecordKey] = []
    for page in pages {
      for record in page.records where seen.insert(RecordKey(record)).inserted { keys.append(RecordKey(record)) }
    }
    return keys
  }

  /// Plans the records of `pages` against the `stored` rows read for their
  /// keys (a key missing from `stored` is a record the store lacks):
  ///
  /// - absent: **new**, one row inserted;
  /// - stored, same content hash, not removed: **unchanged**, only its
  ///   sighting (URL, last seen, page, crawl) is written;
  /// - stored, other hash: **changed**, its fields updated;
  /// - stored and removed: **restored**, its fields updated and the removal
  ///   cleared, whatever its hash.
  ///
  /// Each change carries the fields it touched with their values' texts
  /// (`fieldChanges`) and their names (`changedFields`), found here once
  /// (`ChangedFields.diff`) so that no reader parses the stored fields again
  /// to learn them.
  ///
  /// Each page is planned after the ones before it, so a record given twice
  /// is compared the second time with what the first left.
  ///
  /// - Complexity: O(*n*) in the records of `pages`.
  package static func plan(_ pages: [PageCommit], stored: [RecordKey: StoredRecordRow]) -> RecordPlan {
    /// A record as the batch has left it so far.
    struct Current {
      var insertAt: Int?
      var updateAt: Int?
      var hash: UInt64
      var fields: String
      var removed: Bool
    }
    var plan = RecordPlan()
    var current: [RecordKey: Current] = [:]
    for page in pages {
      for record in page.records {
        let key = RecordKey(record)
        let change = { (kind: ChangeKind, before: String?) -> RecordPlan.PlannedChange in
          let diff = ChangedFields.diff(before, record.fieldsJSON)
          return RecordPlan.PlannedChange(
            change: RecordChange(
              id: 0, source: record.source, key: record.key, kind: kind, url: record.url, beforeJSON: before,
              afterJSON: record.fieldsJSON, at: page.now, run: page.run, changedFields: diff.names,
              fieldChanges: diff.changes),
            router: page.router)
        }
        guard var state = current[key] ?? stored[key].map({
          Current(insertAt: nil, updateAt: nil, hash: $0.contentHash, fields: $0.fields, removed: $0.removed)
        })
        else {
          current[key] = Current(
            insertAt: plan.inserts.count, updateAt: nil, hash: record.contentHash, fields: record.fieldsJSON,
            removed: false)
          plan.inserts.append(
            RecordPlan.Insert(
              record: record, firstSeen: page.now, lastSeen: page.now, page: page.item.fingerprint,
              crawl: page.item.crawl))
          plan.newRecords += 1
          plan.changes.append(change(.new, nil))
          continue
        }
        let unchanged = state.hash == record.contentHash && !state.removed
        if unchanged {
          plan.unchangedRecords += 1
        } else if state.removed {
          plan.restoredRecords += 1
          plan.changes.append(change(.restored, state.fields))
        } else {
          plan.changedRecords += 1
          plan.changes.append(change(.changed, state.fields))
        }
        if let i = state.insertAt {
          // Not stored yet: the row to insert is the latest sighting.
          plan.inserts[i].record = record
          plan.inserts[i].lastSeen = page.now
          plan.inserts[i].page = page.item.fingerprint
          plan.inserts[i].crawl = page.item.crawl
        } else {
          let id = stored[key]!.id
          var update = state.updateAt.map { plan.updates[$0] }
            ?? RecordPlan.Update(
              id: id, url: record.url, fieldsJSON: nil, contentHash: record.contentHash, lastSeen: page.now,
              page: page.item.fingerprint, crawl: page.item.crawl)
          update.url = record.url
          update.lastSeen = page.now
          update.page = page.item.fingerprint
          update.crawl = page.item.crawl
          if !unchanged {
            update.fieldsJSON = record.fieldsJSON
            update.contentHash = record.contentHash
          }
          if let i = state.updateAt {
            plan.updates[i] = update
          } else {
            state.updateAt = plan.updates.count
            plan.updates.append(update)
          }
        }
        state.hash = record.contentHash
        state.fields = record.fieldsJSON
        state.removed = false
        current[key] = state
      }
    }
    return plan
  }

  // MARK: Completing a crawl

  /// What completing a crawl does, from its row and whether entries are left.
  package enum Completion: Sendable, Hashable {
    /// Entries are queued or claimed: the crawl goes on.
    case notYet
    /// It was completed before: nothing to do.
    case alreadyCompleted
    /// It completes now; `capped` when its frontier reached `maxPages`, so
    /// only records of pages it fetched may be removed.
    case completes(capped: Bool)
  }

  /// Whether a crawl completes now: when none of its entries is queued or
  /// claimed and it was not completed before. It is capped when it has a
  /// `maxPages` and its frontier holds that many entries.
  package static func completion(
    hasPendingEntries: Bool, completedBefore: Bool, frontierSize: Int, maxPages: Int?
  ) -> Completion {
    if hasPendingEntries { return .notYet }
    if completedBefore { return .alreadyCompleted }
    return .completes(capped: maxPages.map { frontierSize >= $0 } ?? false)
  }

  /// A record a completing crawl may remove, as the store read it.
  package struct RemovalCandidate: Sendable, Hashable {
    /// The record's identifier.
    package var id: Int64
    /// Its key within the source.
    package var key: String
    /// The page URL it was last seen on.
    package var url: String
    /// Its stored fields.
    package var fields: String
    /// It is already removed.
    package var removed: Bool
    /// The crawl that last saw it; nil when none since the store learnt to track it.
    package var seenCrawl: Int64?
    /// The crawl kept its page (not read again, its records still stand).
    package var pageKept: Bool
    /// The crawl fetched its page (its frontier entry is done).
    package var pageFetched: Bool

    /// A candidate; each parameter has its property's meaning.
    package init(
      id: Int64, key: String, url: String, fields: String, removed: Bool, seenCrawl: Int64?, pageKept: Bool,
      pageFetched: Bool
    ) {
      self.id = id
      self.key = key
      self.url = url
      self.fields = fields
      self.removed = removed
      self.seenCrawl = seenCrawl
      self.pageKept = pageKept
      self.pageFetched = pageFetched
    }
  }

  /// Whether completing `crawl` removes `record`: it is current, a crawl
  /// saw it before (records no crawl saw since the store tracks sightings
  /// are left alone), this crawl did not see it and did not keep its page;
  /// and, when the crawl was `capped`, this crawl fetched its page (a
  /// capped crawl says nothing of the pages it never reached).
  package static func removes(_ record: RemovalCandidate, crawl: Int64, capped: Bool) -> Bool {
    guard !record.removed, let seen = record.seenCrawl, seen < crawl, !record.pageKept else { return false }
    return !capped || record.pageFetched
  }

  /// The `removed` changes of the candidates completing `crawl` of `source`
  /// removes, in the candidates' order, routed by `router` (`firstCrawl`:
  /// the source had no completed crawl before this one).
  package static func removals(
    _ candidates: [RemovalCandidate], source: String, crawl: Int64, capped: Bool, router: (any ChangeRouter)?,
    firstCrawl: Bool, now: Date
  ) -> [(id: Int64, change: RecordPlan.PlannedChange)] {
    candidates.filter { removes($0, crawl: crawl, capped: capped) }.map { record in
      let change = RecordChange(
        id: 0, source: source, key: record.key, kind: .removed, url: record.url, beforeJSON: record.fields,
        afterJSON: nil, at: now, run: nil)
      return (
        record.id,
        RecordPlan.PlannedChange(
          change: change, router: router, channels: router?.channels(for: change, firstCrawl: firstCrawl) ?? [])
      )
    }
  }
}

/// A record's identity within a commit, compared as bytes, as the databases
/// compare it (see `UTF8Key`: two spellings of "é" are two keys). Both
/// stores key their batch lookups by it.
package struct RecordKey: Hashable {
  package let source: UTF8Key
  package let key: UTF8Key

  package init(source: String, key: String) {
    self.source = UTF8Key(source)
    self.key = UTF8Key(key)
  }

  package init(_ record: RecordInput) { self.init(source: record.source, key: record.key) }
}
