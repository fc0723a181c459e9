import ForageURL

extension Feed {
  /// Reads a JSON Feed 1.0 or 1.1 document.
  ///
  /// - SeeAlso: <https://www.jsonfeed.org/version/1.1/>
  static func parseJSONFeed(_ bytes: [UInt8], url: WebURL, paths: [FeedPath] = []) throws(FeedError) -> Feed {
    let json: JSONValue
    do {
      json = try JSONValue.parse(bytes)
    } catch {
      throw FeedError("not valid JSON: \(error)")
    }
    guard case .object = json, json["items"] != nil || (json["version"]?.stringValue ?? "").contains("jsonfeed") else {
      throw FeedError("a JSON document without \"version\" or \"items\": not a JSON Feed")
    }
    var feed = Feed(format: .jsonFeed)
    feed.version = json["version"]?.stringValue
    if feed.version == nil { feed.problems.append("no \"version\"") }
    feed.title = json["title"]?.stringValue
    let base = json["feed_url"]?.stringValue.flatMap { WebURL($0, base: url) } ?? url
    func absolute(_ s: String?) -> String? { nonEmpty(s).map { WebURL($0, base: base)?.href ?? $0 } }
    feed.link = absolute(json["home_page_url"]?.stringValue)
    feed.author = (json["authors"]?[0] ?? json["author"])?["name"]?.stringValue
    guard case .array(let items)? = json["items"] else {
      if json["items"] != nil { feed.problems.append("\"items\" is not an array") }
      return feed
    }
    for item in items {
      guard case .object = item else {
        feed.problems.append("an item that is not an object")
        continue
      }
      var entry = FeedEntry()
      switch item["id"] {
      case .string(let s)?: entry.id = nonEmpty(s)
      case .number(let n)?:
        // 1.0 feeds in the wild give numbers; 1.1 says a string.
        entry.id = JSONValue.format(n)
        feed.problems.append("an item id that is a number")
      default: break
      }
      entry.title = item["title"]?.stringValue.map { htmlText($0).trimmed }.flatMap { nonEmpty($0) }
      entry.link = absolute(item["url"]?.stringValue) ?? absolute(item["external_url"]?.stringValue)
      entry.published = item["date_published"]?.stringValue.flatMap(FeedDate.iso)
      entry.updated = item["date_modified"]?.stringValue.flatMap(FeedDate.iso)
      entry.summary = nonEmpty(item["summary"]?.stringValue)
      if let html = nonEmpty(item["content_html"]?.stringValue) {
        entry.content = html
        entry.contentIsHTML = true
      } else {
        entry.content = nonEmpty(item["content_text"]?.stringValue)
      }
      if let a = item["authors"]?[0] ?? item["author"] ?? json["authors"]?[0] ?? json["author"] {
        entry.author = nonEmpty(a["name"]?.stringValue)
        entry.authorURL = absolute(a["url"]?.stringValue)
      }
      if case .array(let tags)? = item["tags"] { entry.categories = tags.compactMap(\.stringValue) }
      if case .array(let attachments)? = item["attachments"] {
        for a in attachments {
          guard let u = absolute(a["url"]?.stringValue) else { continue }
          var length: Int?
          if case .number(let n)? = a["size_in_bytes"], n >= 0, n < 1e15 { length = Int(n) }
          entry.enclosures.append(FeedEnclosure(url: u, type: nonEmpty(a["mime_type"]?.stringValue), length: length))
        }
      }
      for path in paths where path.pointer != nil { entry.extensions[path.description] = path.values(in: item) }
      feed.entries.append(entry)
    }
    return feed
  }
}

extension JSONValue {
  /// The string, when this is one.
  var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }
}
