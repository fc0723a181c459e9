#if Postgres
import Foundation
import ForageStore

extension PostgresStore {
  /// Why a pipelined commit gave way to the one that sends its statements
  /// one at a time: a page whose claim this worker lost, or a new record
  /// that another worker inserted first. Its transaction was rolled back.
  struct PipelinedCommitDeclined: Error {}

  /// Commits `pages` in one transaction of two round trips (three when
  /// changes go to notification channels), the statements of each sent in
  /// one pipeline: first the frontier states, the locked read of the
  /// batch's records, the page rows, the "kept" marks and the lookup of the
  /// batch's links; then, from what those read, the records' inserts and
  /// updates, the changes (the outbox), the links and the COMMIT.
  ///
  /// It writes what `commit`'s statement-by-statement path writes, assuming
  /// what is nearly always true: that every page's claim is still this
  /// worker's and that no other worker inserts one of the batch's new
  /// records meanwhile. When either is false it throws
  /// ``PipelinedCommitDeclined`` having written nothing (the transaction
  /// rolls back), and the caller commits the batch the other way, which
  /// handles both.
  ///
  /// A batch that names an entry twice is not for this path (the caller checks).
  static func pipelinedCommit(_ db: PostgresConnection, _ pages: [PageCommit], owners: [Int64: String]) throws
    -> CommitResult
  {
    let keys = RecordRules.keys(of: pages)
    var sources: [String] = []
    for page in pages where page.router != nil {
      for record in page.records where !sources.contains(record.source) { sources.append(record.source) }
    }
    var pageRows: [PageRecord] = []
    var rowOf: [UInt64: Int] = [:]
    var kept: [Int64: [UInt64]] = [:]
    var links: [Int64: (seeds: [FrontierSeed], cap: Int?)] = [:]
    for page in pages {
      if let record = page.page {
        // Of two rows of one page the later wins (an upsert may not touch a row twice).
        if let at = rowOf[record.fingerprint] { pageRows[at] = record } else {
          rowOf[record.fingerprint] = pageRows.count
          pageRows.append(record)
        }
      }
      if page.keepsRecords { kept[page.item.crawl, default: []].append(page.item.fingerprint) }
      if !page.discovered.isEmpty { links[page.item.crawl, default: ([], page.maxPages)].seeds += page.discovered }
    }
    // In crawl id order, as the other path: the crawl rows are locked last.
    var batches = links.sorted { $0.key < $1.key }.map { LinkBatch($0.value.seeds, crawl: $0.key, cap: $0.value.cap) }

    // First round trip: what the plan needs to read, and the writes that need nothing read.
    var storedAt: Int?
    var lookupsAt: [Int] = []
    var statesAt = 0
    let first = try db.pipeline { p in
      // The change-order lock, shared, before any row lock (see `holdChangeOrderSQL`).
      p.send(holdChangeOrderSQL)
      let states = frontierStatesStatement(pages, owners: owners)
      statesAt = p.send(states.sql, states.params)
      if !keys.isEmpty {
        let read = storedRecordsStatement(keys, completedCrawlOf: sources)
        storedAt = p.send(read.sql, read.params)
      }
      if !pageRows.isEmpty {
        let upsert = upsertPagesStatement(pageRows)
        p.send(upsert.sql, upsert.params)
      }
      for (crawl, fingerprints) in kept.sorted(by: { $0.key < $1.key }) {
        let mark = keptStatement(fingerprints, crawl: crawl)
        p.send(mark.sql, mark.params)
      }
      for mark in lostPagesStatements(pages) { p.send(mark.sql, mark.params) }
      for batch in batches { lookupsAt.append(p.send(batch.lookup.sql, batch.lookup.params)) }
    }
    // Every entry written means every claim held (the batch names each once).
    guard first[statesAt].count == pages.count else { throw PipelinedCommitDeclined() }

    var result = CommitResult()
    var plan: RecordPlan?
    if let storedAt {
      let (stored, completed) = storedRecords(first[storedAt])
      var planned = RecordRules.plan(pages, stored: stored)
      result.held += try holdFieldLosses(db, pages, plan: &planned, stored: stored)
      try planned.route { source in
        if let known = completed[source] { return !known }
        return try !sourceHasCompletedCrawl(db, source)
      }
      plan = planned
    }
    let linkWrites = batches.indices.map { batches[$0].writes(existing: first[lookupsAt[$0]]) }
    let changes = plan?.changes.map(\.change) ?? []
    let notifying = plan?.changes.contains { !$0.channels.isEmpty } ?? false

    // The records' writes; with the links and the COMMIT unless the outbox
    // needs the changes' ids first.
    var insertAt: Int?
    var changesAt: Int?
    var linksAt: [Int?] = []
    func sendRecords(_ p: PostgresPipeline) {
      guard let plan else { return }
      if !plan.inserts.isEmpty {
        let insert = insertRecordsStatement(plan.inserts, skippingStored: false)
        insertAt = p.send(insert.sql, insert.params)
      }
      if !plan.updates.isEmpty {
        let update = updateRecordsStatement(plan.updates)
        p.send(update.sql, update.params)
      }
      if !changes.isEmpty {
        let write = changesStatement(changes)
        changesAt = p.send(write.sql, write.params)
      }
    }
    // The crawl's running coverage, then its links: rows every worker of the
    // crawl writes, so they are locked last, just before the COMMIT.
    let coverage = coverageStatement(pages)
    func sendLinks(_ p: PostgresPipeline) {
      if let coverage { p.send(coverage.sql, coverage.params) }
      for writes in linkWrites {
        var last: Int?
        for write in writes { last = p.send(write.sql, write.params) }
        linksAt.append(last)
      }
    }
    let second: [PostgresResult]
    do {
      second = try notifying ? db.pipeline(sendRecords) : db.pipelineCommitting { p in
        sendRecords(p)
        sendLinks(p)
      }
    } catch let error as StoreError where error.debugDescription.contains("SQLSTATE 23505") {
      // Another worker inserted one of the new records first.
      throw PipelinedCommitDeclined()
    }
    if let insertAt, let plan, second[insertAt].count != plan.inserts.count { throw PipelinedCommitDeclined() }
    let written = try changesAt.map { try Self.written(changes, second[$0]) } ?? []
    var linkResults = second
    if notifying, let plan {
      let routed = zip(written, plan.changes).map { ($0, $1.channels) }
      let outbox = outboxStatement(routed)
      linkResults = try db.pipelineCommitting { p in
        if let outbox { p.send(outbox.sql, outbox.params) }
        sendLinks(p)
      }
      result.notifications += outbox?.rows ?? 0
    }
    for (batch, at) in zip(batches, linksAt) { result.linksAdded += try batch.added(at.map { linkResults[$0] }) }
    if let plan {
      result.changes += written
      result.newRecords += plan.newRecords
      result.changedRecords += plan.changedRecords
      result.unchangedRecords += plan.unchangedRecords
      result.restoredRecords += plan.restoredRecords
    }
    return result
  }
}
#endif
