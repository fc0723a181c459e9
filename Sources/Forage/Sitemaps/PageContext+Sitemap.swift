import Foundation
import ForageHTTP
import ForageStore
import ForageSupport
import ForageURL

/// A source's sitemaps as a launch sees them: which start URLs are
/// sitemaps, and the named ones that are not start URLs.
///
/// Sitemaps are marked on the frontier by their depth: a sitemap named in
/// the config is a start URL (depth 0, told from pages by its fingerprint);
/// every other sitemap has a negative depth, its level below zero (−1 for
/// one named in robots.txt, −2 and −3 for those an index lists), so that a
/// killed launch resumes them as sitemaps and the frontier's claim order
/// (lowest depth first) reads them before pages. The pages they list are at
/// depth 1.
struct SitemapPlan: Sendable {
  /// Fingerprints of the named sitemaps.
  var named: Set<UInt64> = []
  /// Named sitemaps that are not start URLs: put on the frontier (at depth
  /// −1) when a start URL is processed.
  var extraSeeds: [FrontierSeed] = []
  var fromRobots = false

  init(_ source: CompiledSource) {
    switch source.source.sitemap {
    case .urls(let urls)?:
      let starts = Set(source.source.urls.compactMap { WebURL($0) }.map { PageContext.seed($0, source: source, depth: 0).fingerprint })
      for url in urls.compactMap({ WebURL($0) }) {
        let seed = PageContext.seed(url, source: source, depth: -1)
        named.insert(seed.fingerprint)
        if !starts.contains(seed.fingerprint) { extraSeeds.append(seed) }
      }
    case .robotsTxt?: fromRobots = true
    case nil: break
    }
  }

  /// The level of `item` as a sitemap (1 for the top), or nil for a page.
  func level(of item: FrontierItem) -> Int? {
    if item.depth < 0 { return -item.depth }
    if item.depth == 0 && named.contains(item.fingerprint) { return 1 }
    return nil
  }
}

extension CompiledSource {
  /// Checks a source's `sitemap` and `sitemapFilter` (for sources built in
  /// code; the config reader says the same with the config's keys) and
  /// returns the compiled filter.
  static func checkSitemap(_ source: Source, at path: String, reader: inout ConfigReader) -> NSRegularExpression? {
    guard let location = source.sitemap else {
      if source.sitemapFilter != nil { reader.problem("\(path).sitemapFilter", "applies only with \"sitemap\"") }
      return nil
    }
    if source.format == .feed { reader.problem("\(path).sitemap", "a feed source cannot read sitemaps") }
    if case .urls(let urls) = location {
      if urls.isEmpty { reader.problem("\(path).sitemap", "names no sitemap") }
      for (i, u) in urls.enumerated() where !URLs.isFetchable(u) {
        reader.problem("\(path).sitemap[\(i)]", "not an absolute http(s) URL: \"\(u)\"")
      }
    }
    return source.sitemapFilter.flatMap { reader.regex($0, at: "\(path).sitemapFilter") }
  }
}

extension PageContext {
  /// The settings a sitemap is fetched with: the source's, with the
  /// protocol's 50 MB as the body limit (a compressed file is held to it
  /// too, and decompressed no further than it). A longer body is cut one
  /// byte past the limit, so that reading it can tell it was longer.
  var sitemapSettings: FetchSettings {
    var s = settings
    s.maxBodySize = Sitemap.maxBytes + 1
    s.truncatesBody = true
    s.markupBodiesOnly = false  // a sitemap may come gzipped, as application/gzip
    return s
  }

  /// Reads a fetched sitemap file at `level`: a urlset's pages go on the
  /// frontier at depth 1 (newest `lastmod` first, each with its `lastmod`),
  /// an index's sitemaps at the next level's depth.
  func processSitemap(_ response: Response, item: FrontierItem, level: Int, now: Date) -> ProcessedPage {
    let bytes = response.body.count
    let name = "sitemap \(item.url)"
    let page = PageContext.pageRecord(response, item: item, now: now)
    guard (200..<300).contains(response.status) else {
      let permanent = PageContext.isPermanentFailure(status: response.status)
      return ProcessedPage(
        commit: commit(item, .failed(permanent: permanent, maxAttempts: EngineDefaults.maxAttempts), page: page),
        kind: .failed, bytes: bytes, warnings: ["\(name): HTTP \(response.status)"])
    }
    var warnings: [String] = []
    var body = response.body
    // Told by the content, not the URL: a .gz name may be served decoded,
    // and a plain name compressed.
    if Inflate.isGzip(body) {
      let result = Inflate.gunzip(body, limit: Sitemap.maxBytes)
      if result.limitReached {
        warnings.append("\(name): more than 50 MB uncompressed; cut off there")
      } else if let failure = result.failure {
        warnings.append("\(name): \(failure); read what came before")
      }
      body = result.bytes
    } else if body.count > Sitemap.maxBytes {
      warnings.append("\(name): more than 50 MB; cut off there")
      body.removeSubrange(Sitemap.maxBytes...)
    }
    let document = SitemapParser.parse(body, url: response.url, maxEntries: Sitemap.maxURLs)
    if document.cutAtEntryLimit {
      warnings.append("\(name): more than \(Sitemap.maxURLs) URLs; cut off after \(Sitemap.maxURLs)")
    }
    if !document.problems.isEmpty { warnings.append("\(name): " + document.problems.joined(separator: "; ")) }
    var discovered: [FrontierSeed] = []
    switch document.kind {
    case .unknown(let reason):
      warnings.append("\(name) is not a sitemap: \(reason)")
    case .index:
      if level >= Sitemap.maxLevels {
        warnings.append(
          "\(name): a sitemap index \(level) levels down; its \(document.entries.count) sitemaps are not read "
            + "(at most \(Sitemap.maxLevels) levels)")
      } else {
        discovered = seeds(document.entries, base: response.url, depth: -(level + 1), pages: false)
      }
    case .urlset, .text, .feed:
      discovered = seeds(document.entries, base: response.url, depth: 1, pages: true)
    }
    return ProcessedPage(
      commit: commit(item, .done, page: page, discovered: discovered), kind: .fetched, bytes: bytes, warnings: warnings)
  }

  /// Frontier seeds for sitemap entries, newest `lastmod` first (entries
  /// without one after, in document order). Pages must be admitted by the
  /// source's scope and match `sitemapFilter`; sitemaps only be http(s).
  func seeds(_ entries: [SitemapEntry], base: WebURL, depth: Int, pages: Bool) -> [FrontierSeed] {
    var out: [FrontierSeed] = []
    out.reserveCapacity(entries.count)
    for entry in entries {
      guard let url = WebURL(entry.loc, base: base), url.isHTTP else { continue }
      if pages {
        guard source.admits(url) else { continue }
        if let filter = source.sitemapFilter {
          let href = url.href
          let range = NSRange(location: 0, length: (href as NSString).length)
          guard filter.firstMatch(in: href, range: range) != nil else { continue }
        }
      }
      var seed = PageContext.seed(url, source: source, depth: depth)
      seed.lastModified = entry.lastModified
      out.append(seed)
    }
    let distantPast = Date.distantPast
    // A stable sort: equal dates keep the file's order.
    return out.enumerated().sorted { a, b in
      let da = a.element.lastModified ?? distantPast
      let db = b.element.lastModified ?? distantPast
      return da != db ? da > db : a.offset < b.offset
    }.map(\.element)
  }

  /// The sitemaps a start URL leads to: named ones that are not start URLs,
  /// and for `"sitemap": "robots"` the `Sitemap:` lines of the robots.txt
  /// at its origin (each origin once per launch). At depth −1.
  func sitemapsFound(from url: WebURL) async -> (seeds: [FrontierSeed], warnings: [String]) {
    var seeds = sitemapPlan.extraSeeds
    guard sitemapPlan.fromRobots, url.isHTTP else { return (seeds, []) }
    let origin = url.origin
    guard robotsOriginsRead.withLock({ $0.insert(origin).inserted }) else { return (seeds, []) }
    guard let rules = await fetcher.robots(for: url) else { return (seeds, []) }
    if let reason = rules.unreachable {
      // Asked again on a later launch (the failure is kept a short while).
      robotsOriginsRead.withLock { _ = $0.remove(origin) }
      return (seeds, ["\(origin)/robots.txt unreachable (\(reason)): its sitemaps cannot be read now"])
    }
    guard !rules.sitemaps.isEmpty else { return (seeds, ["\(origin)/robots.txt names no Sitemap"]) }
    let robotsURL = url.resolving("/robots.txt") ?? url
    for line in rules.sitemaps {
      guard let sitemap = WebURL(line, base: robotsURL), sitemap.isHTTP else { continue }
      seeds.append(PageContext.seed(sitemap, source: source, depth: -1))
    }
    return (seeds, [])
  }
}
