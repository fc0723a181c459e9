import ForageHTTP

/// The sitemaps protocol's limits as Forage applies them.
///
/// A sitemap (or sitemap index) file lists at most ``maxURLs`` URLs in at
/// most ``maxBytes`` bytes, uncompressed; past either limit the rest of the
/// file is cut off, with a warning in the run summary, and the launch goes
/// on. An index may list other indexes, down to ``maxLevels`` levels (the
/// protocol allows one: an index of urlsets; deeper nesting is common
/// enough to follow a little way).
///
/// - SeeAlso: <https://www.sitemaps.org/protocol.html#index>
public enum Sitemap {
  /// URLs read from one file: the protocol's 50,000.
  public static let maxURLs = 50_000
  /// Uncompressed bytes read from one file: the protocol's 50 MB
  /// (52,428,800 bytes). Also the body limit of a sitemap's fetch, whatever
  /// `fetch.maxBodySize` says, so a compressed file cannot be larger either.
  public static let maxBytes = 52_428_800
  /// Levels of sitemap files: a sitemap index (level 1) may list indexes
  /// (level 2) that list urlsets (level 3); an index found at level 3 is
  /// not followed.
  public static let maxLevels = 3
}

/// Where a source's sitemaps are found.
public enum SitemapLocation: Sendable, Hashable {
  /// These sitemap or sitemap index files (absolute http(s) URLs, plain
  /// or gzip-compressed). They are among the source's start URLs
  /// (`Source.urls`) too: the config reader and
  /// `Source.init(name:sitemap:extract:match:items:key:filter:crawl:fetch:critical:wifiOnly:)`
  /// put them there; one missing from `urls` is added when a start URL is fetched.
  case urls([String])
  /// The `Sitemap:` lines of the robots.txt at the origin of each start URL.
  case robotsTxt
}

extension Source {
  /// A source whose pages are those of a sitemap (or sitemap index) at
  /// `sitemap`, each read with the source's `extract`, `items`, `match`
  /// and `key` rules.
  ///
  ///     let shop = Source(name: "shop", sitemap: "https://shop.example/sitemap.xml",
  ///                       extract: ["title": "h1"], filter: "/product/")
  ///
  /// - Parameter filter: a regular expression an entry's URL must match
  ///   (anywhere in it) to be fetched; nil takes every entry.
  public init(
    name: String, sitemap: String, extract fields: KeyValuePairs<String, FieldRule> = [:], match: String? = nil,
    items: String? = nil, key: [String] = [], filter: String? = nil, crawl: CrawlScope? = nil,
    fetch: FetchSettings? = nil, critical: Bool = false, wifiOnly: Bool = false
  ) {
    self.init(
      name: name, urls: [sitemap], extract: fields, match: match, items: items, key: key, crawl: crawl, fetch: fetch,
      critical: critical, wifiOnly: wifiOnly)
    self.sitemap = .urls([sitemap])
    self.sitemapFilter = filter
  }
}
