import Foundation
import ForageHTML
import ForageSupport
import ForageStore
import ForageURL

/// A source with its selectors and patterns compiled once per job, shared
/// by reference by the tasks that fetch and extract its pages.
final class CompiledSource: Sendable {
  struct CompiledField: Sendable {
    var name: String
    var rule: FieldRule
    var selector: Selector?
    var regex: NSRegularExpression?
    /// A `jsonld` or `meta` rule (HTML sources), in place of `selector`.
    var structured: StructuredField?
    /// An extension path (feed sources), in place of `selector`.
    var feedPath: FeedPath? = nil
  }

  let source: Source
  let fields: [CompiledField]
  let match: Selector?
  let items: Selector?
  let follow: Selector?
  let include: [NSRegularExpression]
  let exclude: [NSRegularExpression]
  /// `sitemapFilter`, compiled.
  let sitemapFilter: NSRegularExpression?
  /// Hosts of the start URLs (for `sameHost`).
  let startHosts: Set<String>
  let canonicalizer: URLCanonicalizer
  /// Links already resolved for this source (shared by every copy).
  let linkMemo = LinkMemo()

  /// Compiles `source`; the config was validated, so failures here are
  /// programming errors surfaced as `ConfigError` for sources built in code.
  init(_ source: Source, canonicalizer: URLCanonicalizer) throws(ConfigError) {
    var reader = ConfigReader()
    var fields: [CompiledField] = []
    let path = "source \"\(source.name)\""
    for f in source.fields {
      let at = "\(path).extract.\(f.name)"
      let rx = f.rule.regex.flatMap { reader.regex($0, at: at + ".regex") }
      if let structured = f.rule.structured {
        CompiledSource.check(structured, rule: f.rule, format: source.format, at: at, reader: &reader)
        fields.append(CompiledField(
          name: f.name, rule: f.rule, selector: nil, regex: rx, structured: StructuredField(structured, pointer: f.rule.selector)))
        continue
      }
      if source.format == .feed {
        if Extractor.feedFields.contains(f.name) {
          reader.problem(at, "\"\(f.name)\" is one of a feed's own fields; give the extension field another name")
        }
        switch FeedPath.parse(f.rule.selector) {
        case .success(let path):
          fields.append(CompiledField(name: f.name, rule: f.rule, selector: nil, regex: rx, feedPath: path))
        case .failure(let problem):
          reader.problem(at, "\(problem)")
        }
        continue
      }
      let sel = source.format == .html ? reader.selector(f.rule.selector, at: at) : nil
      if source.format == .json { reader.pointer(f.rule.selector, at: at) }
      fields.append(CompiledField(name: f.name, rule: f.rule, selector: sel, regex: rx))
    }
    self.fields = fields
    self.match = source.match.flatMap { reader.selector($0, at: "\(path).match") }
    self.items = source.format == .html ? source.items.flatMap { reader.selector($0, at: "\(path).items") } : nil
    self.follow = source.crawl.flatMap { reader.selector($0.follow, at: "\(path).crawl.follow") }
    self.include = (source.crawl?.include ?? []).compactMap { reader.regex($0, at: "\(path).crawl.include") }
    self.exclude = (source.crawl?.exclude ?? []).compactMap { reader.regex($0, at: "\(path).crawl.exclude") }
    self.sitemapFilter = CompiledSource.checkSitemap(source, at: path, reader: &reader)
    for (i, u) in source.urls.enumerated() where !URLs.isFetchable(u) {
      reader.problem("\(path).urls[\(i)]", "not an absolute http(s) URL: \"\(u)\"")
    }
    if source.urls.isEmpty { reader.problem("\(path).url", "missing: give \"url\" or \"urls\"") }
    self.startHosts = Set(source.urls.compactMap { WebURL($0)?.host })
    self.source = source
    self.canonicalizer = canonicalizer
    var health = source.health
    health.recordSelector = source.match ?? source.items
    for f in source.fields where f.rule.structured == nil { health.fieldSelectors[f.name] = f.rule.selector }
    self.health = health
    if !reader.problems.isEmpty { throw ConfigError(file: "<code>", problems: reader.problems) }
  }

  /// The source's health policy, with its record and field selectors named.
  let health: HealthPolicy
}

extension CompiledSource {
  /// Reports what is wrong with a `jsonld` or `meta` rule built in code
  /// (the config reader reports the same with the rule's keys).
  static func check(_ structured: StructuredDataSource, rule: FieldRule, format: SourceFormat, at path: String, reader: inout ConfigReader) {
    let key: String
    switch structured {
    case .jsonLD(let type):
      key = "jsonld"
      if type?.trimmingWhitespace().isEmpty == true { reader.problem("\(path).jsonld", "must not be empty; give a type such as \"Product\" or true") }
      reader.pointer(rule.selector, at: "\(path).pointer")
    case .meta(let name):
      key = "meta"
      if name.trimmingWhitespace().isEmpty { reader.problem("\(path).meta", "must not be empty") }
      if !rule.selector.isEmpty { reader.problem("\(path).pointer", "a \"meta\" rule takes no pointer") }
    }
    if format != .html { reader.problem("\(path).\(key)", "\"\(key)\" reads HTML pages; it does not apply to \(format.rawValue) sources") }
    if rule.attr != nil { reader.problem("\(path).attr", "\"attr\" applies to \"css\" rules only") }
  }

  /// True when the crawl follows links to pages `depth` links away from its
  /// start URLs (`maxDepth`); false for a source without a crawl scope, which
  /// follows no links.
  func followsLinks(toDepth depth: Int) -> Bool {
    source.crawl.map { depth <= $0.maxDepth } ?? false
  }

  /// File extensions of what a crawl never reads as a page: archives,
  /// images, audio, video, fonts, office documents, executables, style
  /// sheets and scripts (compared lower-cased, on the path's last segment).
  static let nonPageExtensions: Set<Substring> = [
    "7z", "bz2", "gz", "rar", "tar", "tgz", "xz", "zip", "zst",
    "avif", "bmp", "gif", "heic", "ico", "jpeg", "jpg", "png", "psd", "svg", "tif", "tiff", "webp",
    "aac", "flac", "m4a", "mid", "mp3", "oga", "ogg", "opus", "wav", "wma",
    "3gp", "avi", "flv", "m4v", "mkv", "mov", "mp4", "mpeg", "mpg", "webm", "wmv",
    "eot", "otf", "ttf", "woff", "woff2",
    "doc", "docx", "epub", "odp", "ods", "odt", "pdf", "ppt", "pptx", "rtf", "xls", "xlsx",
    "apk", "bin", "deb", "dmg", "exe", "iso", "jar", "msi", "pkg", "rpm",
    "css", "js",
  ]

  /// True when the last segment of `url`'s path ends in one of
  /// ``nonPageExtensions``.
  static func namesNonPage(_ url: WebURL) -> Bool {
    // Read on the path's bytes: nearly every link has no extension or a
    // short one, and a crawl asks this for every link of every page.
    url.withPathUTF8 { bytes -> Bool in
      var i = bytes.count
      while i > 0 {
        let b = bytes[i - 1]
        if b == UInt8(ascii: "/") { return false }
        if b == UInt8(ascii: ".") { break }
        i -= 1
      }
      let length = bytes.count - i
      guard i > 0, length > 0, length <= 5 else { return false }
      var lowered = ""
      for b in bytes[i...] {
        guard b < 0x80 else { return false }
        lowered.unicodeScalars.append(Unicode.Scalar((b >= 0x41 && b <= 0x5A) ? b | 0x20 : b))
      }
      return nonPageExtensions.contains(Substring(lowered))
    }
  }

  /// True when the crawl scope admits `url`, depth aside: an http(s) URL
  /// with a host that `sameHost`/`allowedDomains` allow, not naming a
  /// non-page file (unless `include` is given), that matches `include`
  /// (when given) and no `exclude` pattern.
  func admits(_ url: WebURL) -> Bool {
    guard url.isHTTP, let host = url.host else { return false }
    guard let scope = source.crawl else { return true }
    if scope.sameHost || !scope.allowedDomains.isEmpty {
      let allowed = (scope.sameHost && startHosts.contains(host))
        || scope.allowedDomains.contains { host == $0 || host.hasSuffix("." + $0) }
      if !allowed { return false }
    }
    // A link to an archive, an image, a video… is no page to read: it is
    // not fetched (a whole file, up to the body limit, for nothing) unless
    // an `include` pattern names it.
    if include.isEmpty && Self.namesNonPage(url) { return false }
    if include.isEmpty && exclude.isEmpty { return true }
    let href = url.href
    let range = NSRange(location: 0, length: (href as NSString).length)
    if !include.isEmpty && !include.contains(where: { $0.firstMatch(in: href, range: range) != nil }) { return false }
    if exclude.contains(where: { $0.firstMatch(in: href, range: range) != nil }) { return false }
    return true
  }
}

/// URL helpers of the engine.
enum URLs {
  /// True for absolute http and https URLs.
  static func isFetchable(_ string: String) -> Bool {
    guard let u = WebURL(string) else { return false }
    return u.isHTTP
  }
}
