import Foundation
import ForageHTML
import ForageHTTP
import ForageScheduler
import ForageSupport
import ForageURL

/// Turns JSON a person wrote into values, collecting every problem with its
/// path instead of stopping at the first: configs (`ForageConfig`) here,
/// device profiles in `ConfigReader+DeviceProfile.swift`.
struct ConfigReader {
  var problems: [ConfigProblem] = []
  /// Things that are allowed but do not do what they say (a refresh budget
  /// past what the system gives): reported, never a reason to refuse.
  var warnings: [ConfigProblem] = []
  /// The config's fetch settings, which a source's `fetch` object amends.
  var fetchBase = FetchSettings()

  mutating func problem(_ path: String, _ message: String) {
    problems.append(ConfigProblem(path: path, message: message))
  }

  mutating func warning(_ path: String, _ message: String) {
    warnings.append(ConfigProblem(path: path, message: message))
  }

  // MARK: Objects with known keys

  /// The members of an object, checked against the keys it may have; an
  /// unknown key is reported with the closest valid one. A `"//"` key is a
  /// comment (JSON has none) and is skipped in every object.
  mutating func members(_ value: JSONValue, at path: String, allowed: [String]) -> [String: JSONValue]? {
    guard case .object(let members) = value else {
      problem(path, "expected an object, found \(value.typeName)")
      return nil
    }
    var out: [String: JSONValue] = [:]
    for (key, v) in members {
      if key == ConfigReader.commentKey { continue }
      if allowed.contains(key) {
        out[key] = v
      } else {
        let hint = Spelling.hint(for: key, in: allowed)
        problem(join(path, key), "unknown key \"\(key)\"\(hint)")
      }
    }
    return out
  }

  /// The key of a comment in a config object.
  static let commentKey = "//"

  func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  mutating func string(_ v: JSONValue?, at path: String, nonEmpty: Bool = true) -> String? {
    guard let v else { return nil }
    guard case .string(let s) = v else { problem(path, "expected a string, found \(v.typeName)"); return nil }
    if nonEmpty && s.isEmpty { problem(path, "must not be empty"); return nil }
    return s
  }

  /// A name (a source's, a task's, a channel's): a non-empty string without
  /// control characters (a newline, a tab, a NUL, U+0080–U+009F), which
  /// would break the lines and tables that show it.
  mutating func name(_ v: JSONValue?, at path: String) -> String? {
    guard let s = string(v, at: path) else { return nil }
    if let c = s.unicodeScalars.first(where: TerminalText.isControl) {
      let what = c == "\n" || c == "\r" ? "a line break" : c == "\0" ? "a NUL character" : c == "\t" ? "a tab" : "a control character"
      let hex = String(c.value, radix: 16, uppercase: true)
      problem(path, "must not hold \(what) (U+\(String(repeating: "0", count: 4 - hex.count))\(hex)); names are shown on one line")
      return nil
    }
    return s
  }

  /// A string sent as a header's value (`userAgent`): a line break or a
  /// control character in it is a problem at `path`.
  mutating func headerValue(_ v: JSONValue?, at path: String) -> String? {
    guard let s = string(v, at: path) else { return nil }
    if let why = HTTPHeaders.valueProblem(s) { problem(path, why); return nil }
    return s
  }

  mutating func bool(_ v: JSONValue?, at path: String) -> Bool? {
    guard let v else { return nil }
    guard case .bool(let b) = v else { problem(path, "expected true or false, found \(v.typeName)"); return nil }
    return b
  }

  mutating func int(_ v: JSONValue?, at path: String, min: Int = 0) -> Int? {
    guard let v else { return nil }
    guard case .number(let n) = v else {
      problem(path, "expected a whole number, found \(v.description)")
      return nil
    }
    if let message = ConfigReader.wholeNumberProblem(n, min: min) { problem(path, message); return nil }
    return Int(n)
  }

  /// The largest whole number accepted: 2^53 − 1, the last one a JSON
  /// number (a Double) holds exactly.
  static let largestWholeNumber = 9_007_199_254_740_991

  /// What is wrong with `n` as a whole number of at least `min`, or nil
  /// when nothing is.
  static func wholeNumberProblem(_ n: Double, min: Int) -> String? {
    let text = numberText(n)
    if n > Double(largestWholeNumber) { return "\(text) is too large; it must be at most \(largestWholeNumber)" }
    if n < Double(min) {
      return n < 0 && min == 0 ? "\(text) is negative; it must be 0 or more" : "\(text) is too small; it must be at least \(min)"
    }
    if n != n.rounded() { return "\(text) is not a whole number" }
    return nil
  }

  /// A number as a message shows it. A number too large for a Double was
  /// read as infinity, and its digits are gone.
  static func numberText(_ n: Double) -> String {
    n.isFinite ? JSONValue.format(n) : "the number"
  }

  /// A number, or nil with a problem reported at `path`; `range` bounds it.
  mutating func number(_ v: JSONValue?, at path: String, in range: ClosedRange<Double>) -> Double? {
    guard let v else { return nil }
    guard case .number(let n) = v else {
      problem(path, "expected a number from \(JSONValue.format(range.lowerBound)) to \(JSONValue.format(range.upperBound)), found \(v.description)")
      return nil
    }
    guard range.contains(n) else {
      problem(path, "\(ConfigReader.numberText(n)) is out of range; it must be from \(JSONValue.format(range.lowerBound)) to \(JSONValue.format(range.upperBound))")
      return nil
    }
    return n
  }

  mutating func duration(_ v: JSONValue?, at path: String) -> Duration? {
    guard let v else { return nil }
    guard case .string(let s) = v, let d = Units.duration(s) else {
      problem(path, "expected a duration such as \"500ms\", \"30s\", \"15m\", \"6h\" or \"1d\", found \(v.description)")
      return nil
    }
    return d
  }

  mutating func size(_ v: JSONValue?, at path: String) -> Int? {
    guard let v else { return nil }
    switch v {
    case .number(let n):
      if let message = ConfigReader.wholeNumberProblem(n, min: 0) {
        problem(path, "\(message) (a size in bytes, or text such as \"512KiB\" or \"10MiB\")")
        return nil
      }
      return Int(n)
    case .string(let s):
      if let n = Units.size(s) { return n }
      fallthrough
    default:
      problem(path, "expected a size such as \"512KiB\" or \"10MiB\", found \(v.description)")
      return nil
    }
  }

  mutating func strings(_ v: JSONValue?, at path: String) -> [String]? {
    guard let v else { return nil }
    if case .string(let s) = v { return [s] }
    guard case .array(let items) = v else { problem(path, "expected an array of strings, found \(v.typeName)"); return nil }
    var out: [String] = []
    for (i, item) in items.enumerated() {
      if let s = string(item, at: "\(path)[\(i)]") { out.append(s) }
    }
    return out
  }

  mutating func stringMap(_ v: JSONValue?, at path: String) -> [String: String]? {
    guard let v else { return nil }
    guard case .object(let members) = v else { problem(path, "expected an object of strings, found \(v.typeName)"); return nil }
    var out: [String: String] = [:]
    for (k, item) in members {
      if let s = string(item, at: join(path, k), nonEmpty: false) { out[k] = s }
    }
    return out
  }

  /// The compiled selector, or nil with a problem reported at `path`.
  @discardableResult
  mutating func selector(_ css: String, at path: String) -> Selector? {
    do {
      return try Selector(css)
    } catch {
      problem(path, "invalid CSS selector: \(error)")
      return nil
    }
  }

  /// The compiled pattern, or nil with a problem reported at `path`.
  @discardableResult
  mutating func regex(_ pattern: String, at path: String) -> NSRegularExpression? {
    do {
      return try NSRegularExpression(pattern: pattern)
    } catch {
      problem(path, "invalid regular expression \"\(pattern)\"")
      return nil
    }
  }

  mutating func pointer(_ p: String, at path: String) {
    if let message = JSONPointer.validate(p) { problem(path, message) }
  }

  // MARK: The config

  static let topKeys = ["userAgent", "store", "fetch", "tasks", "sources", "removeQueryParameters", "notify"]
  static let fetchKeys = [
    "userAgent", "concurrency", "perHostConcurrency", "perHostDelay", "adaptiveDelay", "timeout", "connectTimeout",
    "maxBodySize", "robotsTxt", "retries", "headers", "headersFromEnv", "secretOrigins", "cookies",
  ]
  static let taskKeys = [
    "id", "kind", "every", "budget", "requiresNetwork", "requiresExternalPower", "sources", "cpu", "transfer",
    "title", "subtitle", "strategy",
  ]
  static let sourceKeys = [
    "name", "url", "urls", "feed", "format", "extract", "match", "items", "key", "crawl", "fetch", "critical", "wifiOnly", "charset",
    "notifyWhen", "notifyVia", "history", "sitemap", "sitemapFilter", "downloadEnclosures", "download", "health",
  ]
  static let fieldKeys = [
    "css", "pointer", "path", "jsonld", "meta", "attr", "all", "type", "regex", "trim", "default", "required",
  ]
  static let crawlKeys = ["follow", "sameHost", "allowedDomains", "include", "exclude", "maxDepth", "maxPages", "revisitAfter"]

  mutating func config(_ json: JSONValue) -> ForageConfig? {
    guard let m = members(json, at: "", allowed: ConfigReader.topKeys) else { return nil }
    var config = ForageConfig(sources: [])
    if let userAgent = headerValue(m["userAgent"], at: "userAgent") { config.fetch.userAgent = userAgent }
    config.store = string(m["store"], at: "store")
    if let f = m["fetch"] { fetchSettings(f, at: "fetch", into: &config.fetch) }
    fetchBase = config.fetch
    if let q = strings(m["removeQueryParameters"], at: "removeQueryParameters") { config.removeQueryParameters = q }
    config.notify = notifyChannels(m["notify"], at: "notify")
    checkFileChannels(m["notify"], store: config.store)

    if let s = m["sources"] {
      if case .array(let items) = s {
        if items.isEmpty { problem("sources", "the config has no sources; add at least one") }
        for (i, item) in items.enumerated() {
          if let source = source(item, at: "sources[\(i)]") { config.sources.append(source) }
        }
      } else {
        problem("sources", "expected an array of sources, found \(s.typeName)")
      }
    } else {
      problem("sources", "missing: the config has no sources; add a \"sources\" array with at least one")
    }
    var seen = Set<String>()
    for (i, s) in config.sources.enumerated() where !seen.insert(s.name).inserted {
      problem("sources[\(i)].name", "duplicate source name \"\(s.name)\"")
    }
    checkNotifyVia(sources: m["sources"], notify: m["notify"])

    if let t = m["tasks"] {
      if case .array(let items) = t {
        for (i, item) in items.enumerated() {
          if let task = task(item, at: "tasks[\(i)]", sourceNames: config.sources.map(\.name)) {
            config.tasks.append(task)
          }
        }
      } else {
        problem("tasks", "expected an array of tasks, found \(t.typeName)")
      }
    }
    var seenTasks = Set<String>()
    for (i, t) in config.tasks.enumerated() where !seenTasks.insert(t.id).inserted {
      problem("tasks[\(i)].id", "duplicate task id \"\(t.id)\"")
    }
    return config
  }

  /// Reads a `fetch` object into `s`: each key it names replaces that setting
  /// (the config's settings for a source's object, the defaults for the
  /// config's). Settings are ForageHTTP's `FetchSettings`, one type from the
  /// file to the fetcher.
  mutating func fetchSettings(_ v: JSONValue, at path: String, into s: inout FetchSettings) {
    guard let m = members(v, at: path, allowed: ConfigReader.fetchKeys) else { return }
    func set<T>(_ value: T?, _ keyPath: WritableKeyPath<FetchSettings, T>) {
      if let value { s[keyPath: keyPath] = value }
    }
    set(headerValue(m["userAgent"], at: join(path, "userAgent")), \.userAgent)
    set(int(m["concurrency"], at: join(path, "concurrency"), min: 1), \.concurrency)
    set(int(m["perHostConcurrency"], at: join(path, "perHostConcurrency"), min: 1), \.perHostConcurrency)
    set(duration(m["perHostDelay"], at: join(path, "perHostDelay")), \.perHostDelay)
    set(bool(m["adaptiveDelay"], at: join(path, "adaptiveDelay")), \.adaptiveDelay)
    let timeout = duration(m["timeout"], at: join(path, "timeout"))
    if timeout == .zero { problem(join(path, "timeout"), "must be more than 0s") }
    set(timeout, \.timeout)
    set(duration(m["connectTimeout"], at: join(path, "connectTimeout")), \.connectTimeout)
    let maxBody = size(m["maxBodySize"], at: join(path, "maxBodySize"))
    if let maxBody, maxBody > EngineDefaults.maxReadSize {
      problem(
        join(path, "maxBodySize"),
        "must be at most 1GiB (\(Units.formatBytes(maxBody)) given): a page is read into memory to be parsed; "
          + "large files are downloads (`\"download\": true` on a source, or `forage download`)")
    }
    set(maxBody, \.maxBodySize)
    set(bool(m["robotsTxt"], at: join(path, "robotsTxt")), \.robotsTxt)
    set(int(m["retries"], at: join(path, "retries")), \.retries)
    if let headers = stringMap(m["headers"], at: join(path, "headers")) {
      // A bad name or value is refused, not dropped or sent: a line break
      // in a value would add a header of its own.
      let ok = headers.sorted { $0.key < $1.key }.filter { name, value in
        let at = join(join(path, "headers"), name)
        if let why = HTTPHeaders.nameProblem(name) { problem(at, why); return false }
        if let why = HTTPHeaders.valueProblem(value) { problem(at, why); return false }
        return true
      }
      s.headers = Dictionary(uniqueKeysWithValues: ok)
    }
    // Secrets become credentials, sent only to their origins (see
    // `ForageConfig.fetchSettings(for:)`), never plain headers. Their values
    // are checked when read from the environment, at each request.
    if let env = stringMap(m["headersFromEnv"], at: join(path, "headersFromEnv")) {
      for (name, variable) in env.sorted(by: { $0.key < $1.key }) {
        let at = join(join(path, "headersFromEnv"), name)
        if let why = HTTPHeaders.nameProblem(name) { problem(at, why) }
        if variable.isEmpty || variable.utf8.contains(where: { $0 == 0x3D || $0 < 0x21 || $0 == 0x7F }) {
          problem(at, "expected the name of an environment variable (no spaces, \"=\" or control characters)")
        }
      }
      s.credentials = env.sorted { $0.key < $1.key }.map { Credentials.header($0.key, valueEnv: $0.value) }
    }
    if let origins = strings(m["secretOrigins"], at: join(path, "secretOrigins")) {
      s.credentialOrigins = []
      for (i, text) in origins.enumerated() {
        guard let url = WebURL(text), url.isHTTP else {
          problem(join(path, "secretOrigins[\(i)]"), "expected an http or https origin such as \"https://api.example.com\", found \"\(text)\"")
          continue
        }
        s.credentialOrigins.insert(url.origin)
      }
    }
    set(bool(m["cookies"], at: join(path, "cookies")), \.cookies)
  }

  mutating func task(_ v: JSONValue, at path: String, sourceNames: [String]) -> TaskDefinition? {
    guard let m = members(v, at: path, allowed: ConfigReader.taskKeys) else { return nil }
    guard let id = name(m["id"], at: join(path, "id")) else {
      if m["id"] == nil { problem(join(path, "id"), "missing: every task needs an id") }
      return nil
    }
    var kind = TaskKind.appRefresh
    if let k = string(m["kind"], at: join(path, "kind")) {
      if let parsed = TaskKind(rawValue: k) {
        kind = parsed
      } else {
        let hint = TaskKind.hint(for: k)
        problem(join(path, "kind"), "unknown task kind \"\(k)\"\(hint); expected appRefresh, processing or continuedProcessing")
      }
    }
    let sources = strings(m["sources"], at: join(path, "sources")) ?? []
    if m["sources"] == nil { problem(join(path, "sources"), "missing: name the sources this task refreshes") }
    for (i, name) in sources.enumerated() where !sourceNames.contains(name) {
      let hint = Spelling.hint(for: name, in: sourceNames)
      problem("\(join(path, "sources"))[\(i)]", "no source named \"\(name)\"\(hint)")
    }
    var task = TaskDefinition(id: id, kind: kind, sources: sources)
    if let e = duration(m["every"], at: join(path, "every")) {
      let shortest = TaskDefinition.minimumInterval(for: kind)
      if e < shortest {
        // The interval as written ("0s", not "0ms"); the minimum in minutes.
        let given = m["every"].flatMap { if case .string(let t) = $0 { t } else { nil } } ?? Units.format(e)
        problem(
          join(path, "every"),
          "is \(given); the shortest interval is \(shortest.components.seconds / 60)m (a launch fetches from "
            + "servers; a shorter interval would poll them)")
      } else {
        task.every = e
      }
    }
    if let b = duration(m["budget"], at: join(path, "budget")) {
      if b == .zero { problem(join(path, "budget"), "must be more than 0s") } else { task.budget = b }
    }
    // The system, not the app, sets a refresh launch's time (about 30 s,
    // WWDC 2019 "Advances in App Background Execution").
    let refreshBudget = SchedulerDefaults.appRefreshBudget
    if kind == .appRefresh && task.budget > refreshBudget {
      warning(
        join(path, "budget"),
        "an appRefresh launch gets about \(Units.format(refreshBudget)) from the system, whatever the app asks; "
          + "clamped to \(Units.format(refreshBudget)) (use \"kind\": \"processing\" for longer work)")
      task.budget = refreshBudget
    }
    if let n = bool(m["requiresNetwork"], at: join(path, "requiresNetwork")) { task.requiresNetwork = n }
    if let p = bool(m["requiresExternalPower"], at: join(path, "requiresExternalPower")) { task.requiresExternalPower = p }
    // A share of one core (CPU seconds per second), for the simulator's CPU
    // monitor; 64 cores is far past any phone.
    task.cpu = number(m["cpu"], at: join(path, "cpu"), in: 0...64)
    task.transfer = size(m["transfer"], at: join(path, "transfer")).map(Int64.init)
    continuedSettings(m, at: path, into: &task)
    return task
  }

  /// The keys of a `continuedProcessing` task (the user's "refresh now"):
  /// its title, subtitle and strategy; it has no schedule (`every`) and none
  /// of a processing task's requirements. Other kinds refuse those keys.
  mutating func continuedSettings(_ m: [String: JSONValue], at path: String, into task: inout TaskDefinition) {
    let own = ["title", "subtitle", "strategy"]
    guard task.kind == .continuedProcessing else {
      for key in own where m[key] != nil {
        problem(join(path, key), "applies to continuedProcessing tasks only (this task is \(task.kind.rawValue))")
      }
      return
    }
    if m["every"] != nil {
      problem(
        join(path, "every"),
        "a continuedProcessing task runs when the user starts it (iOS starts one only from a user action in the app), "
          + "never on a schedule: remove \"every\"")
    }
    for key in ["requiresNetwork", "requiresExternalPower"] where m[key] != nil {
      problem(join(path, key), "does not apply to a continuedProcessing task: the user started it, so it runs as it is")
    }
    if let title = string(m["title"], at: join(path, "title")) {
      if title.trimmingCharacters(in: .whitespaces).isEmpty {
        problem(join(path, "title"), "must not be empty: the system shows it while the task runs")
      }
      task.title = title
    } else if m["title"] == nil {
      problem(join(path, "title"), "missing: a continuedProcessing task needs the title the system shows while it runs")
    }
    task.subtitle = string(m["subtitle"], at: join(path, "subtitle"))
    if let text = string(m["strategy"], at: join(path, "strategy")) {
      if let strategy = ContinuedProcessingTaskRequest.SubmissionStrategy(rawValue: text) {
        task.strategy = strategy
      } else {
        let hint = Spelling.hint(for: text, in: ["fail", "queue"])
        problem(
          join(path, "strategy"),
          "unknown strategy \"\(text)\"\(hint); expected \"queue\" (wait until the task can start) "
            + "or \"fail\" (refuse to start it when it cannot start at once)")
      }
    }
  }

  mutating func source(_ v: JSONValue, at path: String) -> Source? {
    guard let m = members(v, at: path, allowed: ConfigReader.sourceKeys) else { return nil }
    let name = self.name(m["name"], at: join(path, "name"))
    if m["name"] == nil { problem(join(path, "name"), "missing: every source needs a name") }
    var urls: [String] = []
    if let u = string(m["url"], at: join(path, "url")) { urls.append(u) }
    if let us = strings(m["urls"], at: join(path, "urls")) { urls += us }
    if let f = string(m["feed"], at: join(path, "feed")) {
      if m["url"] != nil || m["urls"] != nil { problem(join(path, "feed"), "give \"feed\" or \"url\"/\"urls\", not both") }
      else if !URLs.isFetchable(f) { problem(join(path, "feed"), "not an absolute http(s) URL: \"\(f)\"") }
    }
    if m["url"] == nil && m["urls"] == nil && m["feed"] == nil && m["sitemap"] == nil {
      problem(join(path, "url"), "missing: give \"url\", \"urls\", \"feed\" or \"sitemap\"")
    }
    for (i, u) in urls.enumerated() where !URLs.isFetchable(u) {
      let where_ = m["url"] != nil && i == 0 ? join(path, "url") : "\(join(path, "urls"))[\(m["url"] != nil ? i - 1 : i)]"
      problem(where_, "not an absolute http(s) URL: \"\(u)\"")
    }

    var format = SourceFormat.html
    if let f = string(m["format"], at: join(path, "format")) {
      if let parsed = SourceFormat(rawValue: f) { format = parsed } else {
        problem(join(path, "format"), "unknown format \"\(f)\"; expected \"html\", \"json\" or \"feed\"")
      }
    }

    if m["feed"] != nil && m["url"] == nil && m["urls"] == nil, let f = string(m["feed"], at: join(path, "feed")) {
      urls = [f]
      format = .feed
    }
    // Named sitemaps are start URLs too (told from pages by their URL).
    let sitemap = sitemapSettings(m, at: path, format: format)
    if case .urls(let named)? = sitemap.location { urls += named.filter { !urls.contains($0) } }
    if format == .feed {
      for key in ["match", "items", "key", "crawl"] where m[key] != nil {
        problem(join(path, key), "\"\(key)\" does not apply to feed sources (their fields are fixed)")
      }
      if case .object(let fields)? = m["extract"] {
        for (field, _) in fields where Extractor.feedFields.contains(field) {
          problem(
            join(join(path, "extract"), field),
            "\"\(field)\" is one of a feed's own fields; give the extension field another name")
        }
      }
    }
    var source = Source(name: name ?? "", urls: urls, format: format)
    if let ev = m["extract"] {
      if case .object(let fields) = ev {
        for (fieldName, rv) in fields where fieldName != ConfigReader.commentKey {
          if let rule = fieldRule(rv, at: join(join(path, "extract"), fieldName), format: format) {
            source.fields.append(Field(name: fieldName, rule: rule))
          }
        }
      } else {
        problem(join(path, "extract"), "expected an object of fields, found \(ev.typeName)")
      }
    }
    if let match = string(m["match"], at: join(path, "match")) {
      if format == .json { problem(join(path, "match"), "\"match\" applies to HTML sources only") }
      else { selector(match, at: join(path, "match")) }
      source.match = match
    }
    if let items = string(m["items"], at: join(path, "items")) {
      if format == .json { pointer(items, at: join(path, "items")) } else { selector(items, at: join(path, "items")) }
      source.items = items
    }
    if let key = strings(m["key"], at: join(path, "key")) {
      for (i, k) in key.enumerated() where !source.fields.contains(where: { $0.name == k }) {
        let hint = Spelling.hint(for: k, in: source.fields.map(\.name))
        problem("\(join(path, "key"))[\(i)]", "no field named \"\(k)\" in extract\(hint)")
      }
      source.key = key
    }
    if let c = m["crawl"] {
      if format == .json { problem(join(path, "crawl"), "crawling follows HTML links; JSON sources cannot crawl") }
      source.crawl = crawlScope(c, at: join(path, "crawl"))
    }
    if let f = m["fetch"] {
      var settings = fetchBase
      fetchSettings(f, at: join(path, "fetch"), into: &settings)
      source.fetch = settings
    }
    if let c = bool(m["critical"], at: join(path, "critical")) { source.critical = c }
    if let w = bool(m["wifiOnly"], at: join(path, "wifiOnly")) { source.wifiOnly = w }
    if let label = string(m["charset"], at: join(path, "charset")) {
      if let encoding = InputDecoder.encoding(forLabel: label) { source.charset = encoding.rawValue } else {
        let hint = Spelling.hint(for: label, in: InputDecoder.allLabels)
        problem(join(path, "charset"), "unknown charset \"\(label)\"\(hint)")
      }
    }
    source.sitemap = sitemap.location
    source.sitemapFilter = sitemap.filter
    source.downloadEnclosures = enclosureDownloads(
      m["downloadEnclosures"], at: join(path, "downloadEnclosures"), format: format)
    if let d = bool(m["download"], at: join(path, "download")) {
      source.download = d
      if d {
        for key in ["crawl", "sitemap"] where m[key] != nil {
          problem(
            join(path, key),
            "\"\(key)\" does not go with \"download\": a download source reads its start URLs' files only")
        }
      }
    }
    sourceNotifySettings(m, at: path, into: &source)
    sourceHealth(m, at: path, into: &source)
    return name == nil ? nil : source
  }

  mutating func fieldRule(_ v: JSONValue, at path: String, format: SourceFormat) -> FieldRule? {
    let selectorKey = format == .json ? "pointer" : format == .feed ? "path" : "css"
    if case .string(let s) = v {
      checkSelector(s, at: path, format: format)
      return FieldRule(s)
    }
    guard let m = members(v, at: path, allowed: ConfigReader.fieldKeys) else { return nil }
    var rule: FieldRule
    if format == .html && (m["jsonld"] != nil || m["meta"] != nil) {
      guard let r = structuredFieldRule(m, at: path) else { return nil }
      rule = r
    } else {
      for key in ["jsonld", "meta"] where m[key] != nil {
        problem(join(path, key), "\"\(key)\" reads HTML pages; it does not apply to \(format.rawValue) sources")
      }
      for otherKey in ["css", "pointer", "path"] where otherKey != selectorKey && m[otherKey] != nil {
        let also = format == .html && otherKey == "pointer" ? " (a \"pointer\" goes with \"jsonld\", inside a JSON-LD node)" : ""
        problem(join(path, otherKey), "\"\(otherKey)\" does not apply to \(format.rawValue) sources; use \"\(selectorKey)\"\(also)")
      }
      guard let sel = string(m[selectorKey], at: join(path, selectorKey), nonEmpty: format == .html) else {
        if m[selectorKey] == nil {
          let needs = format == .html ? "\"css\", \"jsonld\" or \"meta\"" : "\"\(selectorKey)\""
          problem(join(path, selectorKey), "missing: a field needs \(needs)")
        }
        return nil
      }
      checkSelector(sel, at: join(path, selectorKey), format: format)
      rule = FieldRule(sel)
      if let a = string(m["attr"], at: join(path, "attr")) {
        if format != .html { problem(join(path, "attr"), "\"attr\" applies to HTML sources only") }
        rule.attr = a
      }
    }
    rule.all = bool(m["all"], at: join(path, "all")) ?? false
    if let t = string(m["type"], at: join(path, "type")) {
      if let parsed = FieldType(rawValue: t) { rule.type = parsed } else {
        let hint = FieldType.hint(for: t)
        problem(join(path, "type"), "unknown type \"\(t)\"\(hint); expected string, number, integer, bool or date")
      }
    }
    if let r = string(m["regex"], at: join(path, "regex")) {
      regex(r, at: join(path, "regex"))
      rule.regex = r
    }
    rule.trim = bool(m["trim"], at: join(path, "trim")) ?? true
    rule.defaultValue = m["default"]
    rule.required = bool(m["required"], at: join(path, "required")) ?? false
    return rule
  }

  /// Checks a field's selector for its source's format: a CSS selector, a
  /// JSON Pointer, or a feed's extension path (`itunes:image/@href`).
  mutating func checkSelector(_ s: String, at path: String, format: SourceFormat) {
    switch format {
    case .html: selector(s, at: path)
    case .json: pointer(s, at: path)
    case .feed:
      if case .failure(let why) = FeedPath.parse(s) { problem(path, "\(why)") }
    }
  }

  /// The reading part of a `jsonld` or `meta` rule of an HTML source (its
  /// options are read by `fieldRule`): `jsonld` is a type name or true,
  /// with an optional `pointer` inside the node; `meta` is a tag name.
  /// Either one, never with `css`, `attr` or each other.
  mutating func structuredFieldRule(_ m: [String: JSONValue], at path: String) -> FieldRule? {
    var ok = true
    for key in ["jsonld", "meta"] where m[key] != nil && m["css"] != nil {
      problem(join(path, key), "\"\(key)\" and \"css\" cannot be used together: a field reads one place")
      ok = false
    }
    if m["jsonld"] != nil && m["meta"] != nil {
      problem(join(path, "meta"), "\"jsonld\" and \"meta\" cannot be used together: a field reads one place")
      ok = false
    }
    if m["attr"] != nil {
      problem(join(path, "attr"), "\"attr\" applies to \"css\" rules only")
      ok = false
    }
    var source: StructuredDataSource?
    var pointerText = ""
    if let j = m["jsonld"] {
      switch j {
      case .string(let t) where t.contains(where: { !$0.isWhitespace }): source = .jsonLD(type: t)
      case .bool(true): source = .jsonLD(type: nil)
      default:
        problem(join(path, "jsonld"), "expected a type name such as \"Product\", or true for any type; found \(j.description)")
      }
      if let p = string(m["pointer"], at: join(path, "pointer"), nonEmpty: false) {
        pointer(p, at: join(path, "pointer"))
        pointerText = p
      }
    } else if let name = string(m["meta"], at: join(path, "meta")) {
      source = .meta(name: name)
      if m["pointer"] != nil {
        problem(join(path, "pointer"), "\"pointer\" goes with \"jsonld\" (a JSON Pointer inside the node); a \"meta\" rule reads the tag's content")
      }
    }
    guard ok, let source else { return nil }
    var rule = FieldRule(pointerText)
    rule.structured = source
    return rule
  }

  mutating func crawlScope(_ v: JSONValue, at path: String) -> CrawlScope? {
    guard let m = members(v, at: path, allowed: ConfigReader.crawlKeys) else { return nil }
    var scope = CrawlScope()
    if let f = string(m["follow"], at: join(path, "follow")) {
      selector(f, at: join(path, "follow"))
      scope.follow = f
    }
    scope.sameHost = bool(m["sameHost"], at: join(path, "sameHost")) ?? true
    scope.allowedDomains = strings(m["allowedDomains"], at: join(path, "allowedDomains")) ?? []
    scope.include = strings(m["include"], at: join(path, "include")) ?? []
    scope.exclude = strings(m["exclude"], at: join(path, "exclude")) ?? []
    for (i, p) in scope.include.enumerated() { regex(p, at: "\(join(path, "include"))[\(i)]") }
    for (i, p) in scope.exclude.enumerated() { regex(p, at: "\(join(path, "exclude"))[\(i)]") }
    if let d = int(m["maxDepth"], at: join(path, "maxDepth")) { scope.maxDepth = d }
    if let p = int(m["maxPages"], at: join(path, "maxPages"), min: 1) { scope.maxPages = p }
    if let r = duration(m["revisitAfter"], at: join(path, "revisitAfter")) { scope.revisitAfter = r }
    return scope
  }

  // MARK: Suggestions

  /// The candidate closest to `word` by edit distance, when close enough to
  /// be a likely typo.
  static func closest(to word: String, in candidates: [String]) -> String? {
    let w = Array(word.lowercased())
    var best: (String, Int)?
    for c in candidates {
      let d = editDistance(w, Array(c.lowercased()))
      if d <= max(2, c.count / 3), best == nil || d < best!.1 { best = (c, d) }
    }
    return best?.0
  }

  static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var prev = Array(0...b.count)
    var cur = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      cur[0] = i
      for j in 1...b.count {
        cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
      }
      swap(&prev, &cur)
    }
    return prev[b.count]
  }
}

extension JSONValue: CustomStringConvertible {
  /// The value as compact JSON, for messages.
  public var description: String {
    let s = serialized()
    return s.count > 60 ? String(s.prefix(57)) + "..." : s
  }
}
