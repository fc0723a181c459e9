import Foundation
import ForageHTML
import ForageSupport
import ForageURL

/// A record extracted from one page, before it is stored.
struct ExtractedRecord: Sendable, Hashable {
  var key: String
  var fields: JSONValue
}

/// What a page yielded: records and the links to follow.
struct Extraction: Sendable {
  var records: [ExtractedRecord] = []
  /// Followable (http and https) links in document order, without duplicates.
  var links: [CrawlLink] = []
  /// Problems worth reporting (a required field missing, a conversion that
  /// failed), at most a few per page.
  var warnings: [String] = []
  /// True when `shouldStop` stopped the extraction: what is here is only
  /// part of the page's records and links.
  var interrupted = false
  /// The source's `match` and `items` selectors found something (true
  /// for a source without them).
  var matched = true
  /// Records dropped because a `required` field had no value.
  var dropped = 0
  /// Field values the selectors found, over every record (dropped ones
  /// too): zero when none of the field selectors matched anything.
  var valuesFound = 0
}

/// Extracts records and links from fetched pages, as a source's rules say.
enum Extractor {
  /// Attributes whose values are URLs: extracted values are made absolute.
  // A literal known to be valid: compiled once.
  static let baseSelector = try! Selector("base[href]")

  static let urlAttributes: Set<String> = ["href", "src", "action", "poster", "data-src"]

  /// How many records are extracted between two questions to `shouldStop`.
  static let recordsBetweenStopChecks = 16

  // MARK: HTML

  /// The records and links of a parsed page. `shouldStop` is asked before
  /// every few records and before the links: when it answers true, the
  /// result is marked `interrupted` (a launch past its budget).
  static func extractHTML(
    _ document: Document, url: WebURL, canonical: WebURL, source s: CompiledSource, wantLinks: Bool,
    shouldStop: (() -> Bool)? = nil
  ) -> Extraction {
    var out = Extraction()
    let base = baseURL(of: document, pageURL: url)
    let root: [Element]
    if let items = s.items {
      root = document.select(items)
    } else if let docElement = document.documentElement {
      root = [docElement]
    } else {
      root = []
    }
    let matches = s.match.map { document.selectFirst($0) != nil } ?? true
    out.matched = matches && (s.items == nil || !root.isEmpty)
    if matches && !s.fields.isEmpty {
      let inItem = s.items != nil
      // JSON-LD and <meta> tags: read once per page, when a field first asks.
      var structured = PageStructuredData(document: document, url: url, items: inItem ? root : nil)
      for (index, scope) in root.enumerated() {
        if let shouldStop, index % Self.recordsBetweenStopChecks == 0, shouldStop() {
          out.interrupted = true
          return out
        }
        addRecord(index: index, items: inItem, url: url, canonical: canonical, source: s, to: &out) {
          f, warnings, unreadable in
          if let spec = f.structured {
            return structuredValue(
              f, spec, item: inItem ? index : nil, page: &structured, base: base, warnings: &warnings,
              unreadable: &unreadable)
          }
          guard let sel = f.selector else { return nil }
          let elements: [Element]
          if f.rule.all {
            elements = inItem ? scope.select(sel) + (sel.matches(scope) ? [scope] : []) : document.select(sel)
          } else if inItem {
            elements = sel.matches(scope) ? [scope] : scope.selectFirst(sel).map { [$0] } ?? []
          } else {
            elements = document.selectFirst(sel).map { [$0] } ?? []
          }
          var values: [JSONValue] = []
          let isURL = f.rule.attr.map { urlAttributes.contains($0.lowercased()) } ?? false
          for e in elements {
            let raw: String?
            if let attr = f.rule.attr {
              raw = e.attr(attr).map { v in
                isURL ? (base.resolving(v.trimmingWhitespace())?.href ?? v) : v
              }
            } else {
              raw = e.text
            }
            guard let raw else { continue }
            if let v = convert(raw, field: f, warnings: &warnings, unreadable: &unreadable) { values.append(v) }
          }
          return f.rule.all ? (values.isEmpty ? nil : .array(values)) : values.first
        }
      }
    }
    if let shouldStop, shouldStop() {
      out.interrupted = true
      return out
    }
    if wantLinks, let follow = s.follow {
      // Sites repeat links on every page (nav, footer): where only the
      // origin matters they are resolved once per crawl (see LinkMemo).
      // Only an http(s) base has an origin that tells its pages apart.
      let origin = base.isHTTP ? s.linkMemo.originID(base.origin) : nil as Int?
      let elements = document.select(follow)
      // One entry per page to fetch: links that differ only in what the
      // canonical form drops (a fragment, utm_ parameters) count once.
      var seen = Set<UInt64>(minimumCapacity: elements.count)
      // Within a page, hrefs that differ only after their "#" name the same
      // page (`functions.html#abs`, `functions.html#all`, `#top`): each is
      // resolved once. Documentation pages link to a few pages hundreds of
      // times over.
      var onThisPage: [UTF8Key: CrawlLink?] = [:]
      // The crawl's memo is shared by the pages processed at once: it is
      // read for the whole page under one lock, and what the page learnt is
      // added under one more.
      struct Href {
        var trimmed: String
        var pageKey: UTF8Key?
        var memoKey: LinkMemo.Key?
      }
      var hrefs: [Href] = []
      hrefs.reserveCapacity(elements.count)
      for e in elements {
        guard let href = e.attr("href") ?? e.attr("src"), !CrawlLink.namesOtherScheme(href) else { continue }
        let trimmed = href.trimmingWhitespace()
        hrefs.append(Href(
          trimmed: trimmed, pageKey: CrawlLink.fragmentlessKey(trimmed).map(UTF8Key.init),
          memoKey: origin.flatMap { LinkMemo.key(href, origin: $0) }))
      }
      let remembered = s.linkMemo.lookup(hrefs.map(\.memoKey))
      var learnt: [LinkMemo.Key: CrawlLink?] = [:]
      for (i, h) in hrefs.enumerated() {
        let link: CrawlLink?
        if let pageKey = h.pageKey, let known = onThisPage[pageKey] {
          link = known
        } else if let known = remembered[i] {
          link = known
        } else if let key = h.memoKey, let known = learnt[key] {
          link = known
        } else {
          let resolved = base.resolving(h.trimmed)?.removingFragment
          link = resolved.flatMap { $0.isHTTP ? CrawlLink($0, source: s) : nil }
          if let key = h.memoKey { learnt[key] = .some(link) }
        }
        if let pageKey = h.pageKey { onThisPage[pageKey] = link }
        if let link, seen.insert(link.fingerprint).inserted { out.links.append(link) }
      }
      if !learnt.isEmpty { s.linkMemo.remember(learnt) }
    }
    return out
  }

  /// The document's base URL: the first `<base href>` resolved against the
  /// page URL, else the page URL.
  ///
  /// - SeeAlso: <https://html.spec.whatwg.org/#document-base-url>
  static func baseURL(of document: Document, pageURL: WebURL) -> WebURL {
    guard let base = document.selectFirst(baseSelector), let href = base.attr("href"),
          let resolved = pageURL.resolving(href.trimmingWhitespace()) else { return pageURL }
    return resolved
  }

  // MARK: JSON

  static func extractJSON(_ json: JSONValue, url: WebURL, canonical: WebURL, source s: CompiledSource) -> Extraction {
    var out = Extraction()
    let scopes: [JSONValue]
    if let items = s.source.items {
      guard case .array(let array)? = JSONPointer.resolve(items, in: json) else {
        out.warnings.append("\(url.href): \"items\" pointer \(items) does not name an array")
        return out
      }
      scopes = array
    } else {
      scopes = [json]
    }
    for (index, scope) in scopes.enumerated() {
      addRecord(index: index, items: s.source.items != nil, url: url, canonical: canonical, source: s, to: &out) {
        f, warnings, unreadable in
        guard let found = JSONPointer.resolve(f.rule.selector, in: scope), found != .null else { return nil }
        if f.rule.all, case .array(let arr) = found {
          return .array(arr.compactMap { ValueConversion.convert($0, to: f.rule.type) })
        } else if case .string(let str) = found {
          return convert(str, field: f, warnings: &warnings, unreadable: &unreadable)
        }
        let converted = ValueConversion.convert(found, to: f.rule.type)
        if converted == nil && f.rule.type.isNumeric { unreadable = true }
        return converted
      }
    }
    return out
  }

  /// Builds one record from each field's extracted value (nil when nothing
  /// matched or converted): the field's default stands in, a missing
  /// `required` field drops the record with a warning, other fields are null
  /// — except a `number` or `integer` field whose text does not read as a
  /// number (`value` sets its `unreadable` flag), which is missing: left out
  /// of the record, not stored as null (issue 29).
  static func addRecord(
    index: Int, items: Bool, url: WebURL, canonical: WebURL, source s: CompiledSource, to out: inout Extraction,
    value: (CompiledSource.CompiledField, inout [String], inout Bool) -> JSONValue?
  ) {
    var members: [(key: String, value: JSONValue)] = []
    var dropped = false
    for f in s.fields {
      var unreadable = false
      if let v = value(f, &out.warnings, &unreadable) {
        members.append((f.name, v))
        out.valuesFound += 1
      } else if let d = f.rule.defaultValue {
        members.append((f.name, d))
      } else if f.rule.required {
        if !dropped, out.warnings.count < 5 {
          out.warnings.append("\(url.href): required field \"\(f.name)\" has no value")
        }
        dropped = true
      } else if !unreadable {
        members.append((f.name, .null))
      }
    }
    if dropped {
      out.dropped += 1
      return
    }
    append(members, index: index, items: items, url: url, canonical: canonical, source: s, to: &out)
  }

  /// Adds a record with its identity. A record whose `key` fields are all
  /// missing has no identity: storing it under an empty key would merge it
  /// with every other such record, so it is dropped with a warning.
  static func append(
    _ members: [(key: String, value: JSONValue)], index: Int, items: Bool, url: WebURL, canonical: WebURL,
    source s: CompiledSource, to out: inout Extraction
  ) {
    let fields = JSONValue.object(members)
    if !s.source.key.isEmpty && s.source.key.allSatisfy({ name in
      switch fields[name] {
      case nil, .null?: return true
      case .string(let v)?: return v.isEmpty
      default: return false
      }
    }) {
      if out.warnings.count < 5 {
        out.warnings.append("\(url.href): a record without its key field(s) \(s.source.key.joined(separator: ", ")) was skipped")
      }
      return
    }
    out.records.append(ExtractedRecord(
      key: key(for: fields, source: s.source, canonical: canonical, itemIndex: items ? index : nil), fields: fields))
  }

  // MARK: Shared

  /// Text as its field's type (trimmed, through the field's regex); nil
  /// when it has none. `unreadable` is set when a `number` or `integer`
  /// field's text gives no number (the regex matched nothing, or what it
  /// gave does not read as one).
  static func convert(
    _ raw: String, field f: CompiledSource.CompiledField, warnings: inout [String], unreadable: inout Bool
  ) -> JSONValue? {
    var text = f.rule.trim ? raw.trimmingWhitespace() : raw
    if let rx = f.regex {
      let ns = text as NSString
      guard let m = rx.firstMatch(in: text, range: NSRange(location: 0, length: ns.length)),
        case let r = m.numberOfRanges > 1 ? m.range(at: 1) : m.range, r.location != NSNotFound
      else {
        if f.rule.type.isNumeric { unreadable = true }
        return nil
      }
      let c = ns.substring(with: r)
      text = f.rule.trim ? c.trimmingWhitespace() : c
    }
    if f.rule.type == .string && text.isEmpty && f.rule.attr == nil { return nil }
    guard let v = ValueConversion.convert(text, to: f.rule.type) else {
      if f.rule.type.isNumeric { unreadable = true }
      if warnings.count < 5 { warnings.append("field \"\(f.name)\": cannot read \"\(text.prefix(40))\" as \(f.rule.type.rawValue)") }
      return nil
    }
    return v
  }

  /// The record's identity: the `key` fields' values, or the canonical URL
  /// (with `#N` for the N-th item when the source has `items`). A NUL
  /// character (which a JSON string may hold, as `\u0000`) becomes U+FFFD,
  /// as the HTML parser does with one in text: PostgreSQL's text holds no NUL,
  /// and a key must be storable in every store.
  static func key(for fields: JSONValue, source: Source, canonical: WebURL, itemIndex: Int?) -> String {
    if !source.key.isEmpty {
      let key = source.key.map { name -> String in
        switch fields[name] {
        case .string(let s)?: return s
        case nil, .null?: return ""
        case let v?: return v.serialized()
        }
      }.joined(separator: "\u{1F}")
      return storable(key)
    }
    if let itemIndex { return canonical.href + "#\(itemIndex)" }
    return canonical.href
  }

  /// `key` with each NUL character replaced by U+FFFD (see `key(for:source:canonical:itemIndex:)`).
  static func storable(_ key: String) -> String {
    guard key.utf8.contains(0) else { return key }
    var out = String.UnicodeScalarView()
    for scalar in key.unicodeScalars { out.append(scalar == "\u{0}" ? "\u{FFFD}" : scalar) }
    return String(out)
  }
}
