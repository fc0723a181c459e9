import Foundation
import Testing
import ForageHTML
import ForageURL
@testable import Forage

/// Finds `../shared/testdata/feeds` (feedparser's well-formed RSS 2.0 and
/// Atom 1.0 tests, each with its expectation in a header comment).
enum FeedCorpus {
  static let folder: URL? = {
    var dir = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
    while dir.path != "/" {
      if FileManager.default.fileExists(atPath: dir.appendingPathComponent("Package.swift").path) {
        let c = dir.deletingLastPathComponent().appendingPathComponent("shared/testdata/feeds")
        return FileManager.default.fileExists(atPath: c.path) ? c : nil
      }
      dir = dir.deletingLastPathComponent()
    }
    return nil
  }()
  static var available: Bool { folder != nil }
}

/// Translates feedparser's `Expect:` expressions into checks on `Feed`:
/// the clauses about fields Forage maps must hold; the others are skipped,
/// counted by reason.
struct FeedExpectation {
  enum Outcome: Equatable { case pass, fail(String), skip(String) }

  /// The document's URL in feedparser's tests (relative links resolve against it).
  static let documentURL = WebURL("http://127.0.0.1:8097/tests/wellformed/x.xml")!

  /// Splits at top-level ` and `.
  static func clauses(_ expr: String) -> [String] {
    var out: [String] = [], cur = "", depth = 0, quote: Character? = nil
    let chars = Array(expr)
    var i = 0
    while i < chars.count {
      let c = chars[i]
      if let q = quote {
        cur.append(c)
        if c == "\\" && i + 1 < chars.count { cur.append(chars[i + 1]); i += 2; continue }
        if c == q { quote = nil }
      } else if c == "'" || c == "\"" {
        quote = c; cur.append(c)
      } else if "([{".contains(c) {
        depth += 1; cur.append(c)
      } else if ")]}".contains(c) {
        depth -= 1; cur.append(c)
      } else if depth == 0 && String(chars[i..<min(i + 5, chars.count)]) == " and " {
        out.append(cur); cur = ""; i += 5; continue
      } else {
        cur.append(c)
      }
      i += 1
    }
    out.append(cur)
    return out.map { c in
      var t = c.trimmingCharacters(in: .whitespaces)
      while t.hasPrefix("(") && t.hasSuffix(")") && !t.hasPrefix("(2") { t = String(t.dropFirst().dropLast()) }
      return t
    }
  }

  /// A Python string literal's value.
  static func literal(_ s: String) -> String? {
    guard s.count >= 2, let q = s.first, q == "'" || q == "\"", s.last == q else { return nil }
    var out = "", it = Array(s.dropFirst().dropLast()), i = 0
    while i < it.count {
      if it[i] == "\\" && i + 1 < it.count {
        let n = it[i + 1]
        if n == "x", i + 3 < it.count, let v = UInt32(String(it[(i + 2)...(i + 3)]), radix: 16) {
          out.unicodeScalars.append(Unicode.Scalar(v)!); i += 4; continue
        }
        if n == "u", i + 5 < it.count, let v = UInt32(String(it[(i + 2)...(i + 5)]), radix: 16) {
          out.unicodeScalars.append(Unicode.Scalar(v)!); i += 6; continue
        }
        out.append(n == "n" ? "\n" : n == "t" ? "\t" : n); i += 2; continue
      }
      out.append(it[i]); i += 1
    }
    return out
  }

  /// `entries[0]['author_detail']['name']` → ["entries", "0", "author_detail", "name"].
  static func path(_ s: String) -> [String]? {
    guard s.hasPrefix("feed[") || s.hasPrefix("entries[") else { return nil }
    var parts = [s.hasPrefix("feed") ? "feed" : "entries"]
    var rest = Substring(s.drop { $0 != "[" })
    while rest.first == "[" {
      guard let close = rest.firstIndex(of: "]") else { return nil }
      var key = String(rest[rest.index(after: rest.startIndex)..<close])
      if let l = literal(key) { key = l }
      parts.append(key)
      rest = rest[rest.index(after: close)...]
    }
    return rest.isEmpty ? parts : nil
  }

  /// Our value at a feedparser path: `.value(nil)` when we have none.
  enum Lookup { case value(String?), skip(String) }

  static func lookup(_ p: [String], in feed: Feed) -> Lookup {
    func entryOrFeed(_ idx: Int?) -> FeedEntry? {
      guard let idx else { return nil }
      return feed.entries.indices.contains(idx) ? feed.entries[idx] : FeedEntry()
    }
    let isFeed = p[0] == "feed"
    let keys = isFeed ? Array(p.dropFirst()) : Array(p.dropFirst(2))
    let entry = isFeed ? nil : entryOrFeed(Int(p[1]))
    if !isFeed && entry == nil { return .skip("unreadable path") }
    let scope = isFeed ? "feed" : "entries[]"
    guard let k = keys.first else { return .skip("whole-object comparison") }
    let sub = keys.count > 1 ? keys[1] : nil
    let subsub = keys.count > 2 ? keys[2] : nil
    switch (isFeed, k) {
    case (_, "title"): return .value(isFeed ? feed.title : entry!.title)
    case (_, "title_detail") where sub == "value": return .value(isFeed ? feed.title : entry!.title)
    case (_, "link"): return .value(isFeed ? feed.link : entry!.link)
    case (_, "id"), (false, "guid"): return .value(isFeed ? feed.id : entry!.id)
    case (_, "updated"), (_, "updated_parsed"): return .value(isFeed ? feed.updated : entry!.updated)
    case (false, "published"), (false, "published_parsed"): return .value(entry!.published)
    case (_, "author"): return .value(isFeed ? feed.author : entry!.author)
    case (true, "author_detail") where sub == "name": return .value(feed.author)
    case (true, "authors") where keys.count == 3 && sub == "0" && subsub == "name": return .value(feed.author)
    case (true, "subtitle"), (true, "tagline"), (true, "description"): return .value(feed.subtitle)
    case (true, "subtitle_detail") where sub == "value": return .value(feed.subtitle)
    case (true, "subtitle_detail") where sub == "type": return .value(feed.subtitle == nil ? nil : feed.subtitleIsHTML ? "html" : "text/plain")
    case (_, "rights"), (_, "copyright"): return .value(isFeed ? feed.rights : entry!.rights)
    case (_, "rights_detail") where sub == "value": return .value(isFeed ? feed.rights : entry!.rights)
    case (_, "rights_detail") where sub == "type":
      let (value, isHTML) = isFeed ? (feed.rights, feed.rightsIsHTML) : (entry!.rights, entry!.rightsIsHTML)
      return .value(value == nil ? nil : isHTML ? "html" : "text/plain")
    case (false, "description"), (false, "summary"): return .value(entry!.summary)
    case (false, "summary_detail") where sub == "value": return .value(entry!.summary)
    case (false, "summary_detail") where sub == "type": return .value(entry!.summary == nil ? nil : entry!.summaryIsHTML ? "html" : "text/plain")
    case (false, "content") where sub == "0" && subsub == "value": return .value(entry!.content)
    case (false, "content") where sub == "0" && subsub == "type": return .value(entry!.content == nil ? nil : entry!.contentIsHTML ? "html" : "text/plain")
    case (false, "author_detail"), (false, "authors"):
      let field = k == "authors" ? subsub : sub
      if k == "authors" && sub != "0" { return .skip("\(scope).authors beyond the first (one author is mapped)") }
      switch field {
      case "name": return .value(entry!.author)
      case "email": return .value(entry!.authorEmail)
      case "href", "url": return .value(entry!.authorURL)
      default: return .skip("\(scope).\(k).\(field ?? "")")
      }
    case (false, "category"): return .value(entry!.categories.first)
    case (false, "tags") where subsub == "term":
      guard let n = Int(sub ?? "") else { return .skip("bad path") }
      return .value(entry!.categories.indices.contains(n) ? entry!.categories[n] : nil)
    case (false, "enclosures"):
      guard let n = Int(sub ?? "") else { return .skip("bad path") }
      let e = entry!.enclosures.indices.contains(n) ? entry!.enclosures[n] : nil
      switch subsub {
      case "url", "href": return .value(e?.url)
      case "type": return .value(e?.type)
      case "length": return .value(e?.length.map(String.init))
      default: return .skip("\(scope).enclosures.\(subsub ?? "")")
      }
    default:
      let shown = ([k] + (sub.map { Int($0) == nil ? [$0] : ["[]"] } ?? [])).joined(separator: ".")
      return .skip("\(scope).\(shown) not mapped")
    }
  }

  /// Date tuples `(2003, 12, 31, 10, 14, 55, 2, 365, 0)` as ISO 8601.
  static func tupleDate(_ s: String) -> String? {
    let n = s.trimmingCharacters(in: CharacterSet(charactersIn: "() ")).split(separator: ",").compactMap {
      Int($0.trimmingCharacters(in: .whitespaces))
    }
    guard n.count == 9 else { return nil }
    func p(_ v: Int, _ w: Int) -> String { String(repeating: "0", count: max(0, w - String(v).count)) + String(v) }
    return "\(p(n[0], 4))-\(p(n[1], 2))-\(p(n[2], 2))T\(p(n[3], 2)):\(p(n[4], 2)):\(p(n[5], 2))Z"
  }

  /// True when two HTML fragments parse to the same tree.
  static func sameHTML(_ a: String, _ b: String) -> Bool {
    func normal(_ s: String) -> String {
      let d = ForageHTML.Document.parse(html: "<body>" + s)
      return d.innerHTML(of: d.rootID)
    }
    return normal(a) == normal(b)
  }

  /// Files whose expectation tests feedparser's own rule for non-standard
  /// elements, with the reason they are skipped.
  static let knownDifferences: [String: String] = [
    "rss/item_description_and_summary.xml": "feedparser's rule for a non-standard <summary> beside <description>",
    "rss/item_summary_and_description.xml": "feedparser's rule for a non-standard <summary> beside <description>",
  ]

  static func check(_ clause: String, feed: Feed) -> Outcome {
    if clause == "not bozo" { return feed.isMalformed ? .fail("malformed: \(feed.problems)") : .pass }
    if clause == "1" { return .pass }
    if clause.hasPrefix("version == ") {
      let v = literal(String(clause.dropFirst(11)))
      let ours = feed.format == .atom ? "atom10" : feed.format == .rss && feed.version == "2.0" ? "rss20" : "other"
      return ours == v ? .pass : .fail("version \(ours)")
    }
    if clause.contains(".has_key(") || clause.hasPrefix("not ") && clause.contains(".has_key(") {
      // `not entries[0].has_key('link')`
      let negated = clause.hasPrefix("not ")
      let body = negated ? String(clause.dropFirst(4)) : clause
      guard let open = body.range(of: ".has_key("), let p = path(String(body[..<open.lowerBound])),
        let key = literal(String(body[open.upperBound...].dropLast()))
      else { return .skip("unreadable expression") }
      switch lookup(p + [key], in: feed) {
      case .skip(let r): return .skip(r)
      case .value(let v): return (v != nil) != negated ? .pass : .fail("has_key(\(key)) is \(v != nil)")
      }
    }
    if clause.hasPrefix("not ") {
      guard let p = path(String(clause.dropFirst(4))) else { return .skip("unreadable expression") }
      switch lookup(p, in: feed) {
      case .skip(let r): return .skip(r)
      case .value(let v): return v == nil || v == "" ? .pass : .fail("expected nothing, found \(v!)")
      }
    }
    if clause.hasPrefix("len(") { return .skip("list lengths (links) not mapped") }
    let sides = clause.components(separatedBy: " == ")
    if sides.count == 1, clause.hasSuffix(" != None"), let p = path(String(clause.dropLast(8))) {
      if case .value(let v) = lookup(p, in: feed) { return v != nil ? .pass : .fail("nil") }
      return .skip("not mapped")
    }
    guard sides.count >= 2 else { return .skip("unreadable expression") }
    let rhs = sides.last!
    let expectedRaw: String?
    if rhs.hasPrefix("(") { expectedRaw = tupleDate(rhs) } else { expectedRaw = literal(rhs) }
    guard var expected = expectedRaw else { return .skip("comparison with a dict or other literal") }
    for lhs in sides.dropLast() {
      guard let p = path(lhs) else { return .skip("unreadable expression") }
      switch lookup(p, in: feed) {
      case .skip(let r): return .skip(r)
      case .value(let v):
        let key = p.last!
        if ["updated", "published"].contains(p[p.count - 1]) || ["updated", "published"].contains(p.count > 2 ? p[2] : "") {
          // feedparser keeps the date as written; ours is ISO 8601 UTC.
          expected = FeedDate.iso(expected) ?? expected
        }
        if key == "type" || (p.contains("content") && p.last == "type") || p.contains("summary_detail") && key == "type" {
          expected = expected.contains("html") ? "html" : expected
        }
        // Titles are text: feedparser keeps HTML titles as markup, so its
        // value is compared by its readable text.
        let titleish = p.contains("title") || p.contains("title_detail")
        if titleish && v == nil && Feed.htmlText(expected).trimmed.isEmpty { continue }
        // An empty element is no value here (feedparser keeps "").
        if v == nil && expected.isEmpty { continue }
        guard let v else { return .fail("\(lhs): expected \(expected), found nothing") }
        if v == expected || (titleish && Feed.htmlText(expected).trimmed == v) { continue }
        // Links are URLs as parsed (host lower-cased); feedparser keeps them as written.
        if key == "link" || key == "href" || key == "url", WebURL(expected)?.href == v { continue }
        // feedparser writes RSS authors as "name (email)"; ours is the name.
        if key == "author", expected.hasSuffix(")"), let open = expected.firstIndex(of: "("),
          expected[..<open].trimmingCharacters(in: .whitespaces) == v { continue }
        // HTML is compared as HTML: feedparser re-serializes it (`<br/>` becomes `<br />`).
        if FeedExpectation.sameHTML(v, expected) { continue }
        return .fail("\(lhs): expected \(expected.debugDescription), found \(v.debugDescription)")
      }
    }
    return .pass
  }
}

@Suite struct FeedCorpusTests {
  @Test(.enabled(if: FeedCorpus.available, "../shared/testdata/feeds not found; the feed corpus check is skipped"))
  func test_corpus_everythingMappedPasses() throws {
    let folder = FeedCorpus.folder!
    var passed = 0, failed: [String] = [], skipped: [String: Int] = [:], partial = 0
    for sub in ["rss", "atom10"] {
      let dir = folder.appendingPathComponent(sub)
      let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".xml") }.sorted()
      for name in files {
        let bytes = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
        let text = String(decoding: bytes, as: UTF8.self)
        guard let d = text.range(of: "Expect:"), let end = text.range(of: "-->", range: d.upperBound..<text.endIndex) else {
          skipped["no expectation", default: 0] += 1
          continue
        }
        let expr = text[d.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        if let reason = FeedExpectation.knownDifferences["\(sub)/\(name)"] {
          skipped[reason, default: 0] += 1
          continue
        }
        let feed: Feed
        do {
          feed = try Feed.parse(bytes, url: FeedExpectation.documentURL)
        } catch {
          failed.append("\(sub)/\(name): \(error)")
          continue
        }
        var outcomes = FeedExpectation.clauses(expr).map { FeedExpectation.check($0, feed: feed) }
        let skips = outcomes.compactMap { if case .skip(let r) = $0 { return r } else { return nil } }
        let fails = outcomes.compactMap { if case .fail(let r) = $0 { return r } else { return nil } }
        outcomes.removeAll { if case .skip = $0 { return true } else { return false } }
        // "not bozo" alone says nothing about our fields.
        let mapped = FeedExpectation.clauses(expr).filter { $0 != "not bozo" }.count - skips.count
        if !fails.isEmpty {
          failed.append("\(sub)/\(name): \(fails.joined(separator: "; "))  [\(expr)]")
        } else if mapped == 0 {
          skipped[skips.first ?? "nothing mapped", default: 0] += 1
        } else {
          passed += 1
          if !skips.isEmpty { partial += 1 }
        }
      }
    }
    let skippedTotal = skipped.values.reduce(0, +)
    var report = "feeds: \(passed) passed, \(failed.count) failed, \(skippedTotal) skipped"
    if partial > 0 { report += " (\(partial) passed files also had unmapped clauses)" }
    for (reason, n) in skipped.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
      report += "\n  skipped \(n): \(reason)"
    }
    for f in failed { report += "\n  FAILED \(f)" }
    print(report)
    #expect(failed.isEmpty, "\(report)")
  }
}
