extension ForageConfig {
  /// The config as JSON text in the format `ForageConfig.parse` reads, with
  /// only non-default settings written.
  public var jsonValue: JSONValue {
    var top: [(key: String, value: JSONValue)] = []
    if let userAgent { top.append(("userAgent", .string(userAgent))) }
    if let store { top.append(("store", .string(store))) }
    let f = fetch.jsonValue
    if case .object(let m) = f, !m.isEmpty { top.append(("fetch", f)) }
    if removeQueryParameters != Defaults.removedQueryParameters {
      top.append(("removeQueryParameters", .array(removeQueryParameters.map(JSONValue.string))))
    }
    if !tasks.isEmpty { top.append(("tasks", .array(tasks.map(\.jsonValue)))) }
    top.append(("sources", .array(sources.map(\.jsonValue))))
    return .object(top)
  }

  /// The config as indented JSON text.
  public var jsonText: String { jsonValue.pretty() }
}

extension FetchOptions {
  var jsonValue: JSONValue {
    var m: [(key: String, value: JSONValue)] = []
    if let userAgent { m.append(("userAgent", .string(userAgent))) }
    if let concurrency { m.append(("concurrency", .number(Double(concurrency)))) }
    if let perHostConcurrency { m.append(("perHostConcurrency", .number(Double(perHostConcurrency)))) }
    if let perHostDelay { m.append(("perHostDelay", .string(Units.format(perHostDelay)))) }
    if let adaptiveDelay { m.append(("adaptiveDelay", .bool(adaptiveDelay))) }
    if let timeout { m.append(("timeout", .string(Units.format(timeout)))) }
    if let connectTimeout { m.append(("connectTimeout", .string(Units.format(connectTimeout)))) }
    if let maxBodySize { m.append(("maxBodySize", .number(Double(maxBodySize)))) }
    if let robotsTxt { m.append(("robotsTxt", .bool(robotsTxt))) }
    if let retries { m.append(("retries", .number(Double(retries)))) }
    if let headers { m.append(("headers", .object(headers.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))) }
    if let headersFromEnv {
      m.append(("headersFromEnv", .object(headersFromEnv.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })))
    }
    if let secretOrigins { m.append(("secretOrigins", .array(secretOrigins.map { .string($0) }))) }
    if let cookies { m.append(("cookies", .bool(cookies))) }
    return .object(m)
  }
}

extension TaskDefinition {
  var jsonValue: JSONValue {
    .object([
      ("id", .string(id)), ("kind", .string(kind.rawValue)), ("every", .string(Units.format(every))),
      ("budget", .string(Units.format(budget))), ("requiresNetwork", .bool(requiresNetwork)),
      ("requiresExternalPower", .bool(requiresExternalPower)), ("sources", .array(sources.map(JSONValue.string))),
    ])
  }
}

extension Source {
  var jsonValue: JSONValue {
    var m: [(key: String, value: JSONValue)] = [("name", .string(name))]
    if urls.count == 1 { m.append(("url", .string(urls[0]))) } else { m.append(("urls", .array(urls.map(JSONValue.string)))) }
    if format != .html { m.append(("format", .string(format.rawValue))) }
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
    let f = fetch.jsonValue
    if case .object(let fm) = f, !fm.isEmpty { m.append(("fetch", f)) }
    if critical { m.append(("critical", .bool(true))) }
    if wifiOnly { m.append(("wifiOnly", .bool(true))) }
    return .object(m)
  }
}

extension FieldRule {
  func jsonValue(format: SourceFormat) -> JSONValue {
    let simple = attr == nil && !all && type == .string && regex == nil && trim && defaultValue == nil && !required
    if simple { return .string(selector) }
    var m: [(key: String, value: JSONValue)] = [(format == .json ? "pointer" : "css", .string(selector))]
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
        return serialized().replacingOccurrences("\",\"", with: "\", \"")
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
