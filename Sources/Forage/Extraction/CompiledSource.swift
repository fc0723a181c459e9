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
    func compileSelector(_ css: String, _ at: String, _ reader: inout ConfigReader) -> Selector? {
      do { return try Selector(css) } catch {
        reader.problem(at, "invalid CSS selector: \(error)")
        return nil
      }
    }
    func compileRegex(_ pattern: String, _ at: String, _ reader: inout ConfigReader) -> NSRegularExpression? {
      do { return try NSRegularExpression(pattern: pattern) } catch {
        reader.problem(at, "invalid regular expression \"\(pattern)\": \(error.localizedDescription)")
        return nil
      }
    }
    for f in source.fields {
      let at = "\(path).extract.\(f.name)"
      let sel = source.format == .html ? compileSelector(f.rule.selector, at, &reader) : nil
      if source.format == .json { reader.pointer(f.rule.selector, at: at) }
      let rx = f.rule.regex.flatMap { compileRegex($0, at + ".regex", &reader) }
      fields.append(CompiledField(name: f.name, rule: f.rule, selector: sel, regex: rx))
    }
    self.fields = fields
    self.match = source.match.flatMap { compileSelector($0, "\(path).match", &reader) }
    self.items = source.format == .html ? source.items.flatMap { compileSelector($0, "\(path).items", &reader) } : nil
    self.follow = source.crawl.flatMap { compileSelector($0.follow, "\(path).crawl.follow", &reader) }
    self.include = (source.crawl?.include ?? []).compactMap { compileRegex($0, "\(path).crawl.include", &reader) }
    self.exclude = (source.crawl?.exclude ?? []).compactMap { compileRegex($0, "\(path).crawl.exclude", &reader) }
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
