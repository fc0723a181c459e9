import Foundation
import ForageHTML
import ForageHTTP
import ForageStore
import ForageSupport
import ForageURL

/// What happened to one frontier entry, ready to commit.
struct ProcessedPage: Sendable {
  enum Kind: Sendable { case fetched, notModified, fresh, failed, deferred }
  var commit: PageCommit
  var kind: Kind
  var bytes = 0
  var warnings: [String] = []

  /// Counts this page by how it ended.
  private func tally(into s: inout some PageTally) {
    switch kind {
    case .fetched: s.pagesFetched += 1
    case .notModified: s.pagesNotModified += 1
    case .fresh: s.pagesFresh += 1
    case .failed: s.pagesFailed += 1
    case .deferred: s.pagesDeferred += 1
    }
  }

  /// The records a 304 kept: the server vouched that they are unchanged,
  /// though the body was not read again.
  var recordsVouchedFor: Int { kind == .notModified ? commit.page?.recordCount ?? 0 : 0 }

  /// Counts this page into the launch's figures (its records' changes come
  /// from the commit's result).
  func count(into s: inout RunSummary) {
    tally(into: &s)
    s.recordsUnchanged += recordsVouchedFor
    s.bytes += Int64(bytes)
    for w in warnings { s.warn(w) }
  }

  /// Counts this page into its source's figures (its records as unchanged
  /// until the commit's changes say otherwise).
  func count(into s: inout SourceRunSummary) {
    tally(into: &s)
    s.recordsUnchanged += commit.records.count + recordsVouchedFor
    if kind == .failed {
      for w in warnings where s.failures.count < SourceRunSummary.failureLimit { s.failures.append(w) }
    }
  }
}

/// Everything a child task needs to fetch and process a page of one source
/// (a class: each page's task shares it by one reference).
final class PageContext: Sendable {
  let source: CompiledSource
  let settings: FetchSettings
  let fetcher: Fetcher
  let run: Int64
  let deadline: ContinuousClock.Instant
  /// Where notable changes go; nil when the config has no channels.
  let router: NotificationRouter?
  /// Which frontier entries are sitemaps, and where more are found.
  let sitemapPlan: SitemapPlan
  /// Origins whose robots.txt `Sitemap:` lines this launch has read.
  let robotsOriginsRead = Locked<Set<String>>([])

  /// The date of what is stored (the job's clock).
  let now: @Sendable () -> Date
  /// A `download` source's downloads (nil for other sources).
  let downloads: Downloads?
  /// The folder a `download` source's cache folder goes in (the config file's).
  let downloadsDirectory: String?

  init(
    source: CompiledSource, settings: FetchSettings, fetcher: Fetcher, run: Int64, deadline: ContinuousClock.Instant,
    router: NotificationRouter? = nil, now: @escaping @Sendable () -> Date = { Date() }, downloads: Downloads? = nil,
    downloadsDirectory: String? = nil
  ) {
    self.now = now
    self.downloads = downloads
    self.downloadsDirectory = downloadsDirectory
    self.source = source
    // An HTML source reads markup only: a link that leads to an archive or a
    // video under a name that does not say so costs its head, not its body.
    var settings = settings
    settings.markupBodiesOnly = source.source.format == .html
    self.settings = settings
    self.fetcher = fetcher
    self.run = run
    self.deadline = deadline
    self.router = router
    self.sitemapPlan = SitemapPlan(source)
  }

  var crawlScope: CrawlScope? { source.source.crawl }

  /// True once the launch is over for a page's processing: its task was
  /// cancelled (the grace after the budget or a stop request passed), or
  /// the clock passed the budget and its grace, which a launch whose
  /// threads are all busy with pages could not yet signal.
  var shouldStop: @Sendable () -> Bool {
    let hardStop = deadline + EngineDefaults.grace
    return { Task.isCancelled || ContinuousClock.now >= hardStop }
  }

  /// Fetches and processes one frontier entry. Never throws: every outcome
  /// is a commit. A start URL of a source with sitemaps also puts the
  /// sitemaps it leads to on the frontier (see `sitemapsFound(from:)`).
  ///
  /// - Parameter previous: the page as stored by an earlier fetch, if any.
  func process(_ item: FrontierItem, previous: PageRecord?) async -> ProcessedPage {
    let sitemapLevel = sitemapPlan.level(of: item)
    var processed = await process(item, previous: previous, sitemapLevel: sitemapLevel)
    if item.depth == 0, sitemapLevel == nil, source.source.sitemap != nil, processed.kind != .deferred,
      let url = WebURL(item.url)
    {
      let found = await sitemapsFound(from: url)
      processed.commit.discovered += found.seeds
      processed.warnings += found.warnings
    }
    return processed
  }

  private func process(_ item: FrontierItem, previous: PageRecord?, sitemapLevel: Int?) async -> ProcessedPage {
    let now = self.now()
    guard let url = WebURL(item.url) else {
      return ProcessedPage(
        commit: commit(item, .failed(permanent: true, maxAttempts: EngineDefaults.maxAttempts)), kind: .failed,
        warnings: ["\(item.url): not a valid URL"])
    }
    if source.source.download && sitemapLevel == nil && item.depth == 0 {
      return await processDownload(item, url: url, now: now)
    }
    // A sitemap is read whole every time (its pages are not kept, only put
    // on the frontier), so it is neither skipped nor asked for conditionally.
    if sitemapLevel == nil, let previous, previous.status == 200 {
      // A page younger than revisitAfter is not fetched again: its stored
      // links still expand this crawl.
      if let scope = crawlScope, now.timeIntervalSince(previous.fetchedAt) < scope.revisitAfter.seconds {
        return ProcessedPage(
          commit: commit(item, .done, discovered: seeds(fromStored: previous.links, depth: item.depth), keepsRecords: true),
          kind: .fresh)
      }
      // Nor is a page its sitemap says has not changed since it was fetched.
      if let lastModified = item.lastModified, lastModified < previous.fetchedAt {
        return ProcessedPage(
          commit: commit(item, .done, discovered: seeds(fromStored: previous.links, depth: item.depth), keepsRecords: true),
          kind: .fresh)
      }
    }
    let validators = sitemapLevel != nil ? nil : previous.flatMap { p -> Validators? in
      guard p.status == 200, p.etag != nil || p.lastModified != nil else { return nil }
      return Validators(etag: p.etag, lastModified: p.lastModified)
    }
    // A start URL may redirect anywhere (http → https, / → /en/): it was
    // named in the config. Later pages' redirects stay within the scope.
    let source = self.source
    var redirectScope: (@Sendable (WebURL) -> Bool)?
    if item.depth > 0 {
      redirectScope = { @Sendable url in PageContext.inScope(url, source: source, depth: 0) }
    }
    let outcome = await fetcher.fetch(
      url, settings: sitemapLevel == nil ? settings : sitemapSettings, validators: validators, deadline: deadline,
      scope: redirectScope)
    switch outcome {
    case .fetched(let response):
      if let sitemapLevel { return processSitemap(response, item: item, level: sitemapLevel, now: now) }
      return processResponse(response, item: item, previous: previous, now: now)
    case .notModified(let response):
      var page = previous ?? PageRecord(url: item.url, fingerprint: item.fingerprint, status: 200, fetchedAt: now)
      page.fetchedAt = now
      page.etag = response.headers["ETag"] ?? page.etag
      page.lastModified = response.headers["Last-Modified"] ?? page.lastModified
      return ProcessedPage(
        commit: commit(
          item, .done, page: page, discovered: seeds(fromStored: page.links, depth: item.depth), keepsRecords: true),
        kind: .notModified)
    case .deferred:
      return ProcessedPage(commit: commit(item, .deferred), kind: .deferred)
    case .disallowed(let u):
      // The page may still be there; robots.txt only keeps us from reading it.
      return ProcessedPage(
        commit: commit(item, .failed(permanent: true, maxAttempts: EngineDefaults.maxAttempts), keepsRecords: true),
        kind: .failed,
        warnings: ["\(u.href): disallowed by robots.txt"])
    case .robotsUnreachable(let u, let reason):
      // Not the page's fault and not final: a later launch asks again.
      return ProcessedPage(
        commit: commit(item, .failed(permanent: false, maxAttempts: EngineDefaults.maxAttempts), keepsRecords: true),
        kind: .failed,
        warnings: [
          "\(u.href): robots.txt unreachable (\(reason)): RFC 9309 treats the site as disallowed until it answers"
        ])
    case .outOfScope(let u):
      return ProcessedPage(
        commit: commit(item, .failed(permanent: true, maxAttempts: EngineDefaults.maxAttempts)), kind: .failed,
        warnings: ["\(item.url): redirected out of the crawl's scope to \(u.href)"])
    case .failed(let error):
      if error.kind == .cancelled || Task.isCancelled {
        return ProcessedPage(commit: commit(item, .deferred), kind: .deferred)
      }
      if error.kind == .budgetUnavailable {
        // The server was not asked: the store was, and failed. Not an
        // attempt of the page's (three such launches failed it for good).
        return ProcessedPage(
          commit: commit(item, .deferred), kind: .deferred,
          warnings: ["\(item.url): not fetched, left for the next launch: \(error)"])
      }
      if sitemapLevel != nil && error.kind == .bodyTooLarge {
        // Served uncompressed past the protocol's limit: asking again gives the same.
        return ProcessedPage(
          commit: commit(item, .failed(permanent: true, maxAttempts: EngineDefaults.maxAttempts)), kind: .failed,
          warnings: ["sitemap \(item.url): \(error)"])
      }
      return ProcessedPage(
        commit: commit(item, .failed(permanent: false, maxAttempts: EngineDefaults.maxAttempts), keepsRecords: true),
        kind: .failed, warnings: ["\(item.url): \(error)"])
    }
  }

  /// The page row of a fetched response (its validators and body hash).
  static func pageRecord(_ response: Response, item: FrontierItem, now: Date) -> PageRecord {
    PageRecord(
      url: response.url.href, fingerprint: item.fingerprint, status: response.status,
      etag: response.headers["ETag"], lastModified: response.headers["Last-Modified"],
      contentHash: StableHash.ofLarge(response.body), fetchedAt: now)
  }

  /// True when a failed status will not change by asking again: 4xx other
  /// than 408 and 429; the rest may.
  static func isPermanentFailure(status: Int) -> Bool {
    (400..<500).contains(status) && status != 408 && status != 429
  }

  /// `previous` is the page as stored before this fetch, if any.
  func processResponse(_ response: Response, item: FrontierItem, previous: PageRecord? = nil, now: Date) -> ProcessedPage {
    let bytes = response.body.count
    var page = PageContext.pageRecord(response, item: item, now: now)
    guard (200..<300).contains(response.status) else {
      let permanent = PageContext.isPermanentFailure(status: response.status)
      // A page that is gone (404, 410) takes its records with it; after any
      // other failure they still stand.
      let gone = response.status == 404 || response.status == 410
      return ProcessedPage(
        commit: commit(
          item, .failed(permanent: permanent, maxAttempts: EngineDefaults.maxAttempts), page: page, keepsRecords: !gone),
        kind: .failed, bytes: bytes, warnings: ["\(item.url): HTTP \(response.status)"])
    }
    let canonical = source.canonicalizer.canonical(response.url)
    let contentType = response.headers["Content-Type"] ?? ""
    var extraction = Extraction()
    // A body that could not be read at all says nothing about its records:
    // they still stand (a removal needs a page that was read).
    var unreadable = false
    switch source.source.format {
    case .json:
      do {
        let json = try JSONValue.parse(response.body)
        extraction = Extractor.extractJSON(json, url: response.url, canonical: canonical, source: source)
      } catch {
        extraction.warnings.append("\(response.url.href): not valid JSON: \(error)")
        unreadable = true
      }
    case .feed:
      extraction = Extractor.extractFeed(response.body, url: response.url, contentType: contentType, source: source)
      unreadable = extraction.records.isEmpty && !extraction.warnings.isEmpty
    case .html:
      guard contentType.isEmpty || ContentType.isMarkup(contentType) else {
        // Followed a link to an image or a PDF: nothing to extract or follow.
        return ProcessedPage(commit: commit(item, .done, page: page), kind: .fetched, bytes: bytes)
      }
      // Parsing and extraction stop when the launch is over (its budget
      // and grace spent, or its task cancelled), so a huge page cannot
      // hold it; the page is left for the next launch, its records as
      // they were.
      let stop = shouldStop
      // The parser reads the charset parameter of the Content-Type itself; a source's charset takes its place.
      let document = Document.parse(
        response.body, transportEncoding: source.source.charset ?? response.headers["Content-Type"],
        options: ParserOptions(shouldStop: stop))
      if document.parseWasInterrupted { return ProcessedPage(commit: commit(item, .deferred), kind: .deferred) }
      page.encoding = document.encoding
      let wantLinks = source.followsLinks(toDepth: item.depth + 1)
      extraction = Extractor.extractHTML(
        document, url: response.url, canonical: canonical, source: source, wantLinks: wantLinks, shouldStop: stop)
      if extraction.interrupted { return ProcessedPage(commit: commit(item, .deferred), kind: .deferred) }
      if document.inputWasTruncated {
        extraction.warnings.append(
          "\(response.url.href): the page is longer than the parser takes "
            + "(\(Units.formatBytes(ParserOptions.largestInput)) once decoded); only its beginning was read")
      }
    }
    let depth = item.depth + 1
    let links = source.followsLinks(toDepth: depth) ? extraction.links.filter(\.allowed) : []
    page.links = links.map(\.url.href)
    // A page that gave records before, answered 2xx with markup, and on
    // which none of the source's selectors found anything now (a block
    // page, a consent wall, a login redirect) is not what it was: its
    // records stand, as after a 304, and it counts toward the source's
    // health (see HealthRules).
    let lost =
      source.source.format == .html && source.health.enabled && (previous?.recordCount ?? 0) > 0
      && (!extraction.matched || extraction.valuesFound == 0)
    if lost {
      extraction.records = []
      extraction.warnings.append(
        "\(response.url.href): none of the source's selectors matched a page that gave "
          + "\(previous?.recordCount ?? 0) record(s) before; its records are kept")
    }
    let outcome = unreadable ? nil : PageContext.extractionOutcome(extraction, lost: lost)
    let records = extraction.records.map {
      let text = $0.fields.serializedInBothOrders()
      return RecordInput(
        source: source.source.name, key: $0.key, url: response.url.href, fieldsJSON: text.original,
        contentHash: StableHash.of(text.sorted))
    }
    let discovered = links.map { FrontierSeed(url: $0.canonicalHref, fingerprint: $0.fingerprint, depth: depth) }
    // An unreadable body, or a lost page, left the page's records as they were.
    page.recordCount = unreadable || lost ? previous?.recordCount ?? 0 : records.count
    var done = commit(
      item, .done, page: page, records: records, discovered: discovered, keepsRecords: unreadable || lost)
    done.extraction = outcome
    return ProcessedPage(commit: done, kind: .fetched, bytes: bytes, warnings: extraction.warnings)
  }

  /// What a page gave its extraction: records, whether the record selector
  /// matched, and each field's present, missing and empty counts.
  static func extractionOutcome(_ extraction: Extraction, lost: Bool) -> PageExtraction {
    var fields: [String: PageExtraction.FieldCount] = [:]
    for record in extraction.records {
      guard case .object(let members) = record.fields else { continue }
      for (name, value) in members {
        switch value {
        case .null: fields[name, default: .init()].missing += 1
        case .string(let s) where s.isEmpty: fields[name, default: .init()].empty += 1
        case .array(let a) where a.isEmpty: fields[name, default: .init()].empty += 1
        default: fields[name, default: .init()].present += 1
        }
      }
    }
    return PageExtraction(
      records: extraction.records.count, matched: extraction.matched, fields: fields, dropped: extraction.dropped,
      lost: lost)
  }

  func seeds(fromStored links: [String], depth: Int) -> [FrontierSeed] {
    guard source.followsLinks(toDepth: depth + 1) else { return [] }
    return links.compactMap { WebURL($0) }.filter { PageContext.inScope($0, source: source, depth: depth + 1) }.map {
      PageContext.seed($0, source: source, depth: depth + 1)
    }
  }

  /// The frontier entry for a link: its canonical form (what identifies the
  /// page, and what is fetched) and that form's fingerprint.
  static func seed(_ url: WebURL, source: CompiledSource, depth: Int) -> FrontierSeed {
    let canonical = source.canonicalizer.canonical(url)
    return FrontierSeed(url: canonical.href, fingerprint: source.canonicalizer.fingerprint(canonical), depth: depth)
  }

  func commit(
    _ item: FrontierItem, _ outcome: FrontierOutcome, page: PageRecord? = nil, records: [RecordInput] = [],
    discovered: [FrontierSeed] = [], keepsRecords: Bool = false
  ) -> PageCommit {
    var commit = PageCommit(
      item: item, outcome: outcome, page: page, records: records, discovered: discovered,
      maxPages: crawlScope?.maxPages, run: run, now: now())
    commit.keepsRecords = keepsRecords
    commit.router = router
    commit.health = source.health
    return commit
  }

  /// True when a crawl may follow `url` at `depth`.
  static func inScope(_ url: WebURL, source: CompiledSource, depth: Int) -> Bool {
    if let scope = source.source.crawl, depth > scope.maxDepth { return false }
    return source.admits(url)
  }
}
