import Foundation
import Forage
import ForageStore

/// A fixed instant for record tests (whole seconds are exact in the store).
let recordT0 = Date(timeIntervalSince1970: 1_700_000_000)

/// Writes records of one source the way a crawl does, through the store's
/// own calls: each `crawl` commits one page (seed 1) with the records given
/// and completes, so a key a crawl leaves out is removed.
struct RecordWriter {
  let store: any Store
  let source: String

  /// Commits `records` (key, fields JSON) as one crawl's page at `now`, then
  /// completes the crawl; returns the changes it made, in order.
  @discardableResult
  func crawl(_ records: [(key: String, fields: String)], at now: Date) async throws -> [RecordChange] {
    let seed = FrontierSeed(url: "https://example.com/\(source)", fingerprint: 0xF00D, depth: 0)
    let crawl = try await store.openCrawl(source: source, seeds: [seed], now: now)
    let items = try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "t", for: .seconds(60), at: now))
    let inputs = records.map {
      RecordInput(
        source: source, key: $0.key, url: "https://example.com/\(source)/\($0.key)", fieldsJSON: $0.fields,
        contentHash: $0.fields.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 })
    }
    let page = PageRecord(url: items[0].url, fingerprint: items[0].fingerprint, status: 200, fetchedAt: now)
    let result = try await store.commit([PageCommit(item: items[0], outcome: .done, page: page, records: inputs, now: now)])
    let completion = try await store.completeCrawl(crawl.id, maxPages: nil, router: nil, now: now)
    return result.changes + (completion?.removed ?? [])
  }
}

/// An engine over `store` whose config names `sources` (never fetched).
func recordEngine(_ store: any Store, sources: [String]) -> Engine {
  Engine(
    config: ForageConfig(
      sources: sources.map { Source(name: $0, url: "http://127.0.0.1:9/\($0)", extract: ["t": "h1"]) }),
    store: store)
}
