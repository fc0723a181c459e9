import Foundation
import ForageHTML
import ForageURL

/// A source with its selectors and patterns compiled once per job, shared
/// by the tasks that fetch and extract its pages.
struct CompiledSource: Sendable {
  struct CompiledField: Sendable {
    var name: String
    var rule: FieldRule
    var selector: Selector?
    var regex: NSRegularExpression?
  }

  let source: Source
  let fields: [CompiledField]
  let match: Selector?
  let items: Selector?
  let follow: Selector?
  let include: [NSRegularExpression]
  let exclude: [NSRegularExpression]
  /// Hosts of the start URLs (for `sameHost`).
  let startHosts: Set<String>
  let canonicalizer: URLCanonicalizer

  /// Compiles `source`; the config was validated, so failures here are
  /// programming errors surfaced as `ConfigError` for sources built in code.
  init(_ source: Source, canonicalizer: URLCanonicalizer) throws(ConfigError) {
    var reader = ConfigReader()
    var fields: [CompiledField] = []
    let path = "source \"\(source.name)\""
    for f in source.fields {
      let at = "\(path).extract.\(f.name)"
      let sel = source.format == .html ? reader.selector(f.rule.selector, at: at) : nil
      if source.format == .json { reader.pointer(f.rule.selector, at: at) }
      let rx = f.rule.regex.flatMap { reader.regex($0, at: at + ".regex") }
      fields.append(CompiledField(name: f.name, rule: f.rule, selector: sel, regex: rx))
    }
    self.fields = fields
    self.match = source.match.flatMap { reader.selector($0, at: "\(path).match") }
    self.items = source.format == .html ? source.items.flatMap { reader.selector($0, at: "\(path).items") } : nil
    self.follow = source.crawl.flatMap { reader.selector($0.follow, at: "\(path).crawl.follow") }
    self.include = (source.crawl?.include ?? []).compactMap { reader.regex($0, at: "\(path).crawl.include") }
    self.exclude = (source.crawl?.exclude ?? []).compactMap { reader.regex($0, at: "\(path).crawl.exclude") }
    for (i, u) in source.urls.enumerated() where !URLs.isFetchable(u) {
      reader.problem("\(path).urls[\(i)]", "not an absolute http(s) URL: \"\(u)\"")
    }
    if source.urls.isEmpty { reader.problem("\(path).url", "missing: give \"url\" or \"urls\"") }
    self.startHosts = Set(source.urls.compactMap { WebURL($0)?.host })
    self.source = source
    self.canonicalizer = canonicalizer
    if !reader.problems.isEmpty { throw ConfigError(file: "<code>", problems: reader.problems) }
  }
}

/// URL helpers of the engine.
enum URLs {
  /// True for absolute http and https URLs.
  static func isFetchable(_ string: String) -> Bool {
    guard let u = WebURL(string) else { return false }
    return (u.scheme == "http" || u.scheme == "https") && u.host != nil
  }
}
