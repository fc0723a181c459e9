extension ConfigReader {
  /// A source's `sitemap` and `sitemapFilter`, checked against the rest of
  /// its object `m`.
  ///
  /// `sitemap` is an absolute http(s) URL, an array of them, or `"robots"`
  /// (the `Sitemap:` lines of the robots.txt at each start URL's origin,
  /// which needs `url` or `urls`). It does not go with `feed`.
  mutating func sitemapSettings(_ m: [String: JSONValue], at path: String, format: SourceFormat)
    -> (location: SitemapLocation?, filter: String?)
  {
    let at = join(path, "sitemap")
    var location: SitemapLocation?
    if let v = m["sitemap"] {
      if case .string("robots") = v {
        location = .robotsTxt
        if m["url"] == nil && m["urls"] == nil && m["feed"] == nil {
          problem(at, "\"robots\" reads the robots.txt of the start URLs' origins: give \"url\" or \"urls\" too")
        }
      } else if let urls = strings(v, at: at) {
        if urls.isEmpty { problem(at, "expected a sitemap URL, an array of them, or \"robots\"") }
        for (i, u) in urls.enumerated() where !URLs.isFetchable(u) {
          let hint = u.lowercased() == "robots" ? " (\"robots\" is written in lowercase)" : ""
          problem(v.isArray ? "\(at)[\(i)]" : at, "not an absolute http(s) URL: \"\(u)\"\(hint)")
        }
        location = .urls(urls)
      }
      if m["feed"] != nil {
        problem(at, "give \"sitemap\" or \"feed\", not both: a feed source reads one feed")
      } else if format == .feed {
        problem(at, "a feed source cannot read sitemaps")
      }
    }
    let filterPath = join(path, "sitemapFilter")
    let filter = string(m["sitemapFilter"], at: filterPath)
    if let filter {
      regex(filter, at: filterPath)
      if m["sitemap"] == nil { problem(filterPath, "applies only with \"sitemap\"") }
    }
    return (location, filter)
  }
}

extension JSONValue {
  fileprivate var isArray: Bool {
    if case .array = self { return true }
    return false
  }
}

extension Source {
  /// True when the source names its sitemaps (which are then start URLs).
  var sitemapsAreStartURLs: Bool {
    if case .urls? = sitemap { return true }
    return false
  }

  /// The `sitemap` and `sitemapFilter` members of the source's config JSON;
  /// `urls` are its start URLs without the named sitemaps.
  var sitemapMembers: (urls: [String], members: [(key: String, value: JSONValue)]) {
    guard let sitemap else { return (urls, []) }
    var members: [(key: String, value: JSONValue)] = []
    var pages = urls
    switch sitemap {
    case .robotsTxt:
      members.append(("sitemap", .string("robots")))
    case .urls(let named):
      pages.removeAll { named.contains($0) }
      members.append(("sitemap", named.count == 1 ? .string(named[0]) : .array(named.map(JSONValue.string))))
    }
    if let sitemapFilter { members.append(("sitemapFilter", .string(sitemapFilter))) }
    return (pages, members)
  }
}
