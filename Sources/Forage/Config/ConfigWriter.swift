import ForageHTTP

extension ForageConfig {
  /// The config as JSON text in the format `ForageConfig.parse` reads, with
  /// only non-default settings written.
  public var jsonValue: JSONValue {
    var top: [(key: String, value: JSONValue)] = []
    if let store { top.append(("store", .string(store))) }
    let f = fetch.jsonValue(comparedTo: FetchSettings())
    if case .object(let m) = f, !m.isEmpty { top.append(("fetch", f)) }
    if removeQueryParameters != EngineDefaults.removedQueryParameters {
      top.append(("removeQueryParameters", .array(removeQueryParameters.map(JSONValue.string))))
    }
    if !tasks.isEmpty { top.append(("tasks", .array(tasks.map(\.jsonValue)))) }
    if !notify.isEmpty { top.append(("notify", .array(notify.map(\.jsonValue)))) }
    top.append(("sources", .array(sources.map { $0.jsonValue(base: fetch) })))
    return .object(top)
  }

  /// The config as indented JSON text.
  public var jsonText: String { jsonValue.pretty() }
}

extension FetchSettings {
  /// The settings that differ from `base`, as the members of a `fetch`
  /// object (so a source writes only what it changes from the config's).
  func jsonValue(comparedTo base: FetchSettings) -> JSONValue {
    var m: [(key: String, value: JSONValue)] = []
    func add<T: Equatable>(_ key: String, _ keyPath: KeyPath<FetchSettings, T>, _ json: (T) -> JSONValue) {
      if self[keyPath: keyPath] != base[keyPath: keyPath] { m.append((key, json(self[keyPath: keyPath]))) }
    }
    add("userAgent", \.userAgent) { .string($0) }
    add("concurrency", \.concurrency) { .number(Double($0)) }
    add("perHostConcurrency", \.perHostConcurrency) { .number(Double($0)) }
    add("perHostDelay", \.perHostDelay) { .string(Units.format($0)) }
    add("adaptiveDelay", \.adaptiveDelay) { .bool($0) }
    add("timeout", \.timeout) { .string(Units.format($0)) }
    add("connectTimeout", \.connectTimeout) { .string(Units.format($0)) }
    add("maxBodySize", \.maxBodySize) { .number(Double($0)) }
    add("robotsTxt", \.robotsTxt) { .bool($0) }
    add("retries", \.retries) { .number(Double($0)) }
    add("headers", \.headers) { h in .object(h.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }) }
    add("headersFromEnv", \.credentials) { c in
      .object(c.compactMap(\.environmentHeader).map { ($0.name, .string($0.variable)) })
    }
    add("secretOrigins", \.credentialOrigins) { .array($0.sorted().map { .string($0) }) }
    add("cookies", \.cookies) { .bool($0) }
    return .object(m)
  }
}

extension TaskDefinition {
  var jsonValue: JSONValue {
    var m: [(key: String, value: JSONValue)] = [("id", .string(id)), ("kind", .string(kind.rawValue))]
    if kind == .continuedProcessing {
      // The user starts it: no schedule, no requirements.
      m.append(("budget", .string(Units.format(budget))))
      m.append(("title", .string(title ?? id)))
      if let subtitle { m.append(("subtitle", .string(subtitle))) }
      m.append(("strategy", .string(strategy.rawValue)))
    } else {
      m += [
        ("every", .string(Units.format(every))), ("budget", .string(Units.format(budget))),
        ("requiresNetwork", .bool(requiresNetwork)), ("requiresExternalPower", .bool(requiresExternalPower)),
      ]
    }
    m.append(("sources", .array(sources.map(JSONValue.string))))
    if let cpu { m.append(("cpu", .number(cpu))) }
    if let transfer { m.append(("transfer", .number(Double(transfer)))) }
    return .object(m)
  }
}

extension Source {
  /// The source as config JSON; its `fetch` object names what differs from
  /// `base`, the config's settings.
  func jsonValue(base: FetchSettings) -> JSONValue {
    var m: [(key: String, value: JSONValue)] = [("name", .string(name))]
    if format == .feed && urls.count == 1 {
      m.append(("feed", .string(urls[0])))
    } else {
      // Named sitemaps are start URLs too: written as `sitemap` only.
      let (pages, sitemapMembers) = self.sitemapMembers
      if pages.count == 1 {
        m.append(("url", .string(pages[0])))
      } else if !pages.isEmpty || !sitemapsAreStartURLs {
        m.append(("urls", .array(pages.map(JSONValue.string))))
      }
      if format != .html { m.append(("format", .string(format.rawValue))) }
      m += sitemapMembers
    }
    if let charset { m.append(("charset", .string(charset))) }
    if !fields.isEmpty { m.append(("extract", .object(fields.map { ($0.name, $0.rule.jsonValue(format: format)) }))) }
    if let match { m.append(("match", .string(match))) }
    if let items { m.append(("items", .string(items))) }
    if !key.isEmpty { m.append(("key", .array(key.map(JSONValue.string)))) }
    if let crawl {
      var c: [(key: String, value: JSONValue)] = [("follow", .string(crawl.follow)), ("sameHost", .bool(crawl.sameHost))]
      if !crawl.allowedDomains.isEmpty { c.append(("allowedDomains", .array(crawl.allowedDomains.map(JSONValue.string)))) }
      if !crawl.include.isEmpty { c.append(("include", .array(crawl.include.map(JSONValue.string)))) }
      if !crawl.exclude.isEmpty { c.append(("exclude", .array(crawl.exclude.map(JSONValue.string)))) }
      c += [
        ("maxDepth", .number(Double(crawl.maxDepth))), ("maxPages", .number(Double(crawl.maxPages))),
        ("revisitAfter", .string(Units.format(crawl.revisitAfter))),
      ]
      m.append(("crawl", .object(c)))
    }
    // Written even when empty: a source with settings of its own keeps them
    // apart from later changes to the config's.
    if let fetch { m.append(("fetch", fetch.jsonValue(comparedTo: base))) }
    if critical { m.append(("critical", .bool(true))) }
    if wifiOnly { m.append(("wifiOnly", .bool(true))) }
    if let downloadEnclosures { m.append(("downloadEnclosures", downloadEnclosures.jsonValue)) }
    if download { m.append(("download", .bool(true))) }
    m += notifyMembers
    m += healthMembers
    return .object(m)
  }
}

extension FieldRule {
  func jsonValue(format: SourceFormat) -> JSONValue {
    let simple = attr == nil && !all && type == .string && regex == nil && trim && defaultValue == nil && !required
    var m: [(key: String, value: JSONValue)]
    switch structured {
    case .jsonLD(let nodeType)?:
      m = [("jsonld", nodeType.map(JSONValue.string) ?? .bool(true))]
      if !selector.isEmpty { m.append(("pointer", .string(selector))) }
    case .meta(let name)?:
      m = [("meta", .string(name))]
    case nil:
      if simple { return .string(selector) }
      m = [(format == .json ? "pointer" : format == .feed ? "path" : "css", .string(selector))]
    }
    if let attr { m.append(("attr", .string(attr))) }
    if all { m.append(("all", .bool(true))) }
    if type != .string { m.append(("type", .string(type.rawValue))) }
    if let regex { m.append(("regex", .string(regex))) }
    if !trim { m.append(("trim", .bool(false))) }
    if let defaultValue { m.append(("default", defaultValue)) }
    if required { m.append(("required", .bool(true))) }
    return .object(m)
  }
}

extension JSONValue {
  /// Indented JSON text (two spaces), keys in their order.
  public func pretty(indent: String = "") -> String {
    let inner = indent + "  "
    switch self {
    case .array(let items) where !items.isEmpty:
      if items.allSatisfy({ if case .string = $0 { return true }; return false }) && serialized().count < 60 {
        // Each item written alone: replacing "," in the whole text also hit
        // a string's own escaped quote followed by a comma.
        return "[" + items.map { $0.serialized() }.joined(separator: ", ") + "]"
      }
      return "[\n" + items.map { inner + $0.pretty(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
    case .object(let members) where !members.isEmpty:
      return "{\n" + members.map { m -> String in
        var key = ""
        JSONValue.writeString(m.key, to: &key)
        return inner + key + ": " + m.value.pretty(indent: inner)
      }.joined(separator: ",\n") + "\n" + indent + "}"
    default:
      return serialized()
    }
  }
}
