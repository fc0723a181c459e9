import ForageSupport
import ForageURL

extension Extractor {
  /// The fields of a feed source's records, in order (their CSV columns).
  static let feedFields = [
    "id", "title", "link", "published", "updated", "author", "authorEmail", "authorURL", "summary", "content",
    "contentType", "categories", "enclosures",
  ]

  /// One record per entry of a feed; a malformed feed still yields its
  /// readable entries, with one warning naming what was wrong. The source's
  /// `extract` fields (extension paths) follow the fixed fields.
  static func extractFeed(_ body: [UInt8], url: WebURL, contentType: String?, source: CompiledSource? = nil)
    -> Extraction
  {
    var out = Extraction()
    let feed: Feed
    let extra = source?.fields.filter { $0.feedPath != nil } ?? []
    do {
      feed = try Feed.parse(body, url: url, contentType: contentType, paths: extra.compactMap(\.feedPath))
    } catch {
      out.warnings.append("\(url.href): not a feed: \(error)")
      return out
    }
    if feed.isMalformed {
      out.warnings.append("\(url.href): malformed feed (\(feed.problems.joined(separator: "; ")))")
    }
    var seen = Set<String>()
    entries: for entry in feed.entries {
      var key = recordKey(entry)
      // Two entries with one key: the later one is told apart by its position.
      if !seen.insert(key).inserted { key += "#\(seen.count)"; seen.insert(key) }
      guard case .object(var members) = fields(entry) else { continue }
      for f in extra {
        let found = entry.extensions[f.feedPath!.description] ?? []
        var value: JSONValue?
        var unreadable = false
        if f.rule.all {
          let converted = found.compactMap { extensionValue($0, field: f, warnings: &out.warnings, unreadable: &unreadable) }
          value = converted.isEmpty ? nil : .array(converted)
        } else if let first = found.first {
          value = extensionValue(first, field: f, warnings: &out.warnings, unreadable: &unreadable)
        }
        if let value {
          members.append((f.name, value))
        } else if let d = f.rule.defaultValue {
          members.append((f.name, d))
        } else if f.rule.required {
          if out.warnings.count < 5 { out.warnings.append("\(url.href): required field \"\(f.name)\" has no value") }
          continue entries
        } else if !unreadable {
          // A number field whose text is no number is missing: left out.
          members.append((f.name, .null))
        }
      }
      out.records.append(ExtractedRecord(key: key, fields: .object(members)))
    }
    return out
  }

  /// An extension value converted to its field's type (text through the
  /// field's regex and trimming, as HTML fields are); `unreadable` is set
  /// when a number field's value is no number.
  static func extensionValue(
    _ v: JSONValue, field f: CompiledSource.CompiledField, warnings: inout [String], unreadable: inout Bool
  ) -> JSONValue? {
    if case .string(let text) = v { return convert(text, field: f, warnings: &warnings, unreadable: &unreadable) }
    let converted = ValueConversion.convert(v, to: f.rule.type)
    if converted == nil && v != .null && f.rule.type.isNumeric { unreadable = true }
    return converted
  }

  /// An entry's identity: its guid or id, else its link, else a stable hash
  /// of its title and date.
  static func recordKey(_ e: FeedEntry) -> String {
    if let id = e.id { return storable(id) }
    if let link = e.link { return storable(link) }
    let basis = (e.title ?? "") + "\n" + (e.published ?? e.updated ?? "") + "\n" + (e.title == nil ? e.summary ?? "" : "")
    let hash = StableHash.of(basis)
    return "hash:" + String(hash, radix: 16)
  }

  /// An entry as a record's fields (`feedFields`; null where absent).
  static func fields(_ e: FeedEntry) -> JSONValue {
    func s(_ v: String?) -> JSONValue { v.map(JSONValue.string) ?? .null }
    let enclosures: [JSONValue] = e.enclosures.map { x in
      .object([("url", .string(x.url)), ("type", s(x.type)), ("length", x.length.map { .number(Double($0)) } ?? .null)])
    }
    let contentType: String? = e.content == nil ? nil : e.contentIsHTML ? "html" : "text"
    return .object([
      ("id", s(e.id)), ("title", s(e.title)), ("link", s(e.link)), ("published", s(e.published)),
      ("updated", s(e.updated)), ("author", s(e.author)), ("authorEmail", s(e.authorEmail)),
      ("authorURL", s(e.authorURL)), ("summary", s(e.summary)), ("content", s(e.content)),
      ("contentType", s(contentType)), ("categories", .array(e.categories.map(JSONValue.string))),
      ("enclosures", .array(enclosures)),
    ])
  }
}
