import ForageHTTP
import ForageStore

/// A web source to keep fresh: where to fetch, what to extract, how far to crawl.
///
///     let prices = Source(name: "prices", url: "https://example.com/item/1",
///                         extract: ["title": "h1", "price": .css(".price", as: .number)])
public struct Source: Sendable, Hashable {
  /// The source's unique name (records are stored under it).
  public var name: String
  /// Start URLs. A source without `crawl` fetches exactly these on every launch.
  public var urls: [String]
  /// How responses are read.
  public var format: SourceFormat
  /// Fields of each record, in order.
  public var fields: [Field]
  /// Only pages where this selector matches produce records.
  public var match: String?
  /// A selector (HTML) or JSON Pointer to an array (JSON) yielding one record
  /// per match; field rules are then relative to the item.
  public var items: String?
  /// Field names that identify a record; empty means the page's canonical URL
  /// (plus the item's position when `items` is set).
  public var key: [String]
  /// Link following; nil fetches the start URLs only.
  public var crawl: CrawlScope?
  /// This source's fetch settings in place of the config's (`nil`: the
  /// config's). A config file's per-source `fetch` object is read on top of
  /// the config's settings, so it holds both.
  public var fetch: FetchSettings?
  /// Critical sources still run in Low Power Mode.
  public var critical: Bool
  /// Sources marked Wi-Fi only wait while the network is expensive or
  /// constrained (cellular, Low Data Mode).
  public var wifiOnly: Bool
  /// The encoding to decode this source's pages with, by name or label
  /// (`"Shift_JIS"`, `"gbk"`, `"koi8-r"`…), in place of the server's charset
  /// and the page's `<meta charset>` (a byte order mark still wins); nil
  /// sniffs each page's encoding. A config file's `charset` is checked
  /// against the Encoding Standard's labels and stored as the name.
  ///
  /// - SeeAlso: <https://encoding.spec.whatwg.org/#names-and-labels>
  public var charset: String? = nil
  /// The conditions that make a change of this source notable (any one
  /// suffices); nil: every changed, removed and restored record, and new
  /// ones except on the source's first completed crawl.
  public var notifyWhen: [ChangeCondition]? = nil
  /// The names of the channels this source's notable changes go to; nil:
  /// every channel of the config.
  public var notifyVia: [String]? = nil
  /// How long this source's change history is kept; nil keeps all of it.
  public var history: HistoryRetention? = nil
  /// Where this source's sitemaps are (see ``SitemapLocation``); nil: it
  /// reads none. Each page a sitemap lists is put on the source's frontier
  /// one link away from the sitemap, newest `lastmod` first, and read with
  /// the source's rules; a page whose `lastmod` is older than its last
  /// fetch is not fetched again. Sitemap indexes are followed down to
  /// ``Sitemap/maxLevels`` levels.
  public var sitemap: SitemapLocation? = nil
  /// A regular expression (`NSRegularExpression`) a sitemap entry's URL
  /// must match, anywhere in it, to be fetched; nil takes every entry. It
  /// applies to pages, not to the sitemaps an index lists.
  public var sitemapFilter: String? = nil
  /// For a feed source: its entries' enclosures are queued as downloads into a
  /// folder (see ``EnclosureDownloads``); nil queues none.
  public var downloadEnclosures: EnclosureDownloads? = nil
  /// The start URLs are large files fetched as background downloads:
  /// resumed across launches (the crawl completes once the file is whole),
  /// then read like a fetched page (HTML, JSON or a feed) and removed from
  /// the cache folder (`.forage-downloads/NAME` beside the config). Each
  /// crawl downloads them again.
  public var download = false
  /// When this source's changes are held instead of applied (a redesign,
  /// a block page: see ``HealthPolicy`` and docs/configuration.md).
  public var health = HealthPolicy()

  /// A source named `name` read from `urls`, with the options described on each property.
  public init(
    name: String, urls: [String], format: SourceFormat = .html,
    extract fields: KeyValuePairs<String, FieldRule> = [:], match: String? = nil,
    items: String? = nil, key: [String] = [], crawl: CrawlScope? = nil,
    fetch: FetchSettings? = nil, critical: Bool = false, wifiOnly: Bool = false
  ) {
    self.name = name
    self.urls = urls
    self.format = format
    self.fields = fields.map { Field(name: $0.key, rule: $0.value) }
    self.match = match
    self.items = items
    self.key = key
    self.crawl = crawl
    self.fetch = fetch
    self.critical = critical
    self.wifiOnly = wifiOnly
  }

  /// A source with one start URL.
  public init(
    name: String, url: String, format: SourceFormat = .html,
    extract fields: KeyValuePairs<String, FieldRule> = [:], match: String? = nil,
    items: String? = nil, key: [String] = [], crawl: CrawlScope? = nil,
    fetch: FetchSettings? = nil, critical: Bool = false, wifiOnly: Bool = false
  ) {
    self.init(
      name: name, urls: [url], format: format, extract: fields, match: match, items: items,
      key: key, crawl: crawl, fetch: fetch, critical: critical, wifiOnly: wifiOnly)
  }
}

/// How a source's responses are parsed.
public enum SourceFormat: String, Sendable, Hashable {
  /// HTML parsed by ForageHTML; fields are CSS selectors.
  case html
  /// JSON; fields are RFC 6901 JSON Pointers.
  case json
  /// A feed (RSS, RSS 1.0, Atom or JSON Feed, told apart by the content):
  /// one record per entry, with fixed fields (`Extractor.feedFields`).
  case feed
}

extension Source {
  /// A feed source: one record per entry of the feed at `feed`, keyed by
  /// its guid or id, else its link, else a hash of its title and date.
  ///
  ///     let news = Source(name: "news", feed: "https://example.com/rss")
  public init(name: String, feed: String, critical: Bool = false, wifiOnly: Bool = false) {
    self.init(name: name, urls: [feed], format: .feed, critical: critical, wifiOnly: wifiOnly)
  }
}

/// Which links a crawl follows.
///
///     CrawlScope(follow: "a[href]", sameHost: true, maxDepth: 5, maxPages: 50_000)
public struct CrawlScope: Sendable, Hashable {
  /// Elements whose `href` (or `src`) is followed.
  public var follow: String
  /// Follow only links to the start URLs' hosts.
  public var sameHost: Bool
  /// Also follow these domains (and their subdomains).
  public var allowedDomains: [String]
  /// When not empty, follow only URLs matching one of these regular expressions.
  public var include: [String]
  /// Never follow URLs matching one of these regular expressions.
  public var exclude: [String]
  /// Link distance from a start URL (start URLs are depth 0).
  public var maxDepth: Int
  /// The crawl's frontier stops growing at this many URLs.
  public var maxPages: Int
  /// A later crawl refetches a page only when its copy is older than this
  /// (with a conditional request); younger pages are not fetched again.
  public var revisitAfter: Duration

  /// A crawl scope; every parameter has its property's meaning, and its default is in `Defaults`.
  public init(
    follow: String = EngineDefaults.follow, sameHost: Bool = true, allowedDomains: [String] = [],
    include: [String] = [], exclude: [String] = [], maxDepth: Int = EngineDefaults.maxDepth,
    maxPages: Int = EngineDefaults.maxPages, revisitAfter: Duration = EngineDefaults.revisitAfter
  ) {
    self.follow = follow
    self.sameHost = sameHost
    self.allowedDomains = allowedDomains
    self.include = include
    self.exclude = exclude
    self.maxDepth = maxDepth
    self.maxPages = maxPages
    self.revisitAfter = revisitAfter
  }
}

