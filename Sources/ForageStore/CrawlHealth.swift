import Foundation

/// One crawl of a source as extraction health saw it (``HealthStore/crawlHealth(source:limit:)``):
/// when it ran, the records its pages gave, each field's coverage, and
/// whether it completed healthy. `forage report` draws these.
public struct CrawlHealth: Sendable, Hashable {
  /// The crawl's identifier in the store.
  public var crawl: Int64
  /// The source crawled.
  public var source: String
  /// When the crawl opened.
  public var startedAt: Date
  /// When it completed; nil while it runs.
  public var completedAt: Date?
  /// Records its pages gave (pages read, not kept; dropped ones not counted).
  public var records: Int
  /// Pages read with their records counted.
  public var pages: Int
  /// Pages that were not what they were (``PageExtraction/lost``).
  public var lostPages: Int
  /// Records dropped for a missing `required` field.
  public var dropped: Int
  /// Per field, by name: records with it, without it, with it empty.
  public var fields: [String: PageExtraction.FieldCount]
  /// True when it completed healthy, false when it held changes, nil while it runs.
  public var healthy: Bool?

  /// A crawl's health; each parameter has its property's meaning.
  public init(
    crawl: Int64, source: String, startedAt: Date, completedAt: Date? = nil, records: Int, pages: Int,
    lostPages: Int = 0, dropped: Int = 0, fields: [String: PageExtraction.FieldCount] = [:], healthy: Bool? = nil
  ) {
    self.crawl = crawl
    self.source = source
    self.startedAt = startedAt
    self.completedAt = completedAt
    self.records = records
    self.pages = pages
    self.lostPages = lostPages
    self.dropped = dropped
    self.fields = fields
    self.healthy = healthy
  }

  /// The share of the crawl's records that had `field` (0 to 1); nil when
  /// the crawl read no record. The same share the health rules judge.
  public func share(_ field: String) -> Double? {
    records == 0 ? nil : Double(fields[field]?.present ?? 0) / Double(records)
  }

  /// One stored row: a crawl's columns and one of its `crawl_fields` rows.
  package struct Row {
    package var crawl: Int64
    package var startedAt: Date
    package var completedAt: Date?
    package var healthy: Bool?
    package var coverage: CoverageRow

    package init(crawl: Int64, startedAt: Date, completedAt: Date?, healthy: Bool?, coverage: CoverageRow) {
      self.crawl = crawl
      self.startedAt = startedAt
      self.completedAt = completedAt
      self.healthy = healthy
      self.coverage = coverage
    }
  }

  /// The crawls of `rows`, in the order their first row comes: the totals
  /// row (field `""`) gives records, pages, lost pages and dropped records.
  package static func grouped(_ rows: [Row], source: String) -> [CrawlHealth] {
    var order: [Int64] = []
    var byCrawl: [Int64: CrawlHealth] = [:]
    for row in rows {
      if byCrawl[row.crawl] == nil {
        order.append(row.crawl)
        byCrawl[row.crawl] = CrawlHealth(
          crawl: row.crawl, source: source, startedAt: row.startedAt, completedAt: row.completedAt, records: 0,
          pages: 0, healthy: row.healthy)
      }
      let c = row.coverage
      if c.field.isEmpty {
        byCrawl[row.crawl]!.records = c.records
        byCrawl[row.crawl]!.pages = c.present
        byCrawl[row.crawl]!.lostPages = c.empty
        byCrawl[row.crawl]!.dropped = c.missing
      } else {
        byCrawl[row.crawl]!.fields[c.field] = .init(present: c.present, missing: c.missing, empty: c.empty)
      }
    }
    return order.map { byCrawl[$0]! }
  }
}
