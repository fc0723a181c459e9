import Foundation
import ForageStore

/// The config's notification keys: the top-level `notify` channels and a
/// source's `notifyWhen`, `notifyVia` and `history` (described in
/// `docs/configuration.md`, "Notifications"), read and written.
extension ConfigReader {
  /// The type keys of a channel; each channel has exactly one.
  static let notifyTypes = ["webhook", "command", "file", "stdout", "local"]
  static let notifyChannelKeys = notifyTypes + ["secretEnv", "env", "passEnv", "name", "batch", "timeout", "maxAge"]
  /// The variable Forage sets for each run of a command; a config cannot.
  static let commandMessageIDVariable = "FORAGE_MESSAGE_ID"
  /// The tests of a field condition; each has exactly one.
  static let conditionTests = [
    "changes", "increases", "decreases", "below", "above", "contains", "matches", "appears", "disappears",
  ]
  static let conditionKeys = ["kind", "field"] + conditionTests
  static let historyKeys = ["keep", "maxAge"]

  /// The shortest channel timeout and age limit accepted.
  static let shortestNotifyTimeout: Duration = .seconds(1)
  static let shortestNotifyMaxAge: Duration = .seconds(60)
  /// The shortest history age limit accepted.
  static let shortestHistoryMaxAge: Duration = .seconds(3600)

  // MARK: Channels

  /// The top-level `notify` array; duplicate names are problems.
  mutating func notifyChannels(_ v: JSONValue?, at path: String) -> [NotifyChannel] {
    guard let v else { return [] }
    guard case .array(let items) = v else {
      problem(path, "expected an array of channels, found \(v.typeName)")
      return []
    }
    var out: [NotifyChannel] = []
    var seen = Set<String>()
    for (i, item) in items.enumerated() {
      let itemPath = "\(path)[\(i)]"
      guard let channel = notifyChannel(item, at: itemPath) else { continue }
      if !seen.insert(channel.name).inserted {
        if item["name"] != nil {
          problem(join(itemPath, "name"), "duplicate channel name \"\(channel.name)\"")
        } else {
          problem(
            itemPath,
            "duplicate channel name \"\(channel.name)\" (an unnamed channel is called by its type); "
              + "give each \(channel.target.typeName) channel a \"name\"")
        }
      }
      out.append(channel)
    }
    return out
  }

  mutating func notifyChannel(_ v: JSONValue, at path: String) -> NotifyChannel? {
    guard let m = members(v, at: path, allowed: ConfigReader.notifyChannelKeys) else { return nil }
    var ok = true
    let types = ConfigReader.notifyTypes.filter { m[$0] != nil }
    var target: NotifyChannel.Target?
    if types.isEmpty {
      problem(path, "missing the channel's type: give one of \"webhook\", \"command\", \"file\", \"stdout\" or \"local\"")
    } else if types.count > 1 {
      problem(path, "a channel has one type; found \(types.map { "\"\($0)\"" }.joined(separator: " and ")) (use one channel for each)")
    } else {
      target = notifyTarget(types[0], m, at: path)
    }
    if let env = m["secretEnv"] {
      if types.count == 1 && types[0] != "webhook" {
        problem(join(path, "secretEnv"), "\"secretEnv\" applies to webhook channels only (it names the secret that signs their requests)")
        ok = false
      } else if let name = string(env, at: join(path, "secretEnv")), !ConfigReader.isEnvironmentName(name) {
        // Only the variable's name is read here: its value is read when a
        // request is signed, never kept in the config.
        problem(
          join(path, "secretEnv"),
          "not an environment variable name: \"\(name)\" (letters, digits and _, not starting with a digit)")
      }
    }
    var channel = target.map { NotifyChannel(target: $0) }
    if m["env"] != nil || m["passEnv"] != nil {
      if let (env, passEnv) = commandEnvironment(m, at: path, command: types.count != 1 || types[0] == "command") {
        channel?.env = env
        channel?.passEnv = passEnv
      } else {
        ok = false
      }
    }
    if let n = m["name"] {
      if let name = name(n, at: join(path, "name")) { channel?.name = name } else { ok = false }
    }
    if let b = m["batch"] {
      if let batch = bool(b, at: join(path, "batch")) { channel?.batch = batch } else { ok = false }
    }
    if let t = m["timeout"] {
      if let timeout = atLeast(duration(t, at: join(path, "timeout")), ConfigReader.shortestNotifyTimeout, "1s", at: join(path, "timeout")) {
        channel?.timeout = timeout
      } else {
        ok = false
      }
    }
    if let a = m["maxAge"] {
      if let maxAge = atLeast(duration(a, at: join(path, "maxAge")), ConfigReader.shortestNotifyMaxAge, "1m", at: join(path, "maxAge")) {
        channel?.maxAge = maxAge
      } else {
        ok = false
      }
    }
    return ok ? channel : nil
  }

  /// Refuses a `file` channel that names the config's store (`store`, else
  /// the default beside the config) or a file Forage keeps beside it: both
  /// paths are taken from the config's folder. (Side-file names, such as
  /// `forage.sqlite-wal`, are refused with the channel.)
  mutating func checkFileChannels(_ v: JSONValue?, store: String?) {
    guard case .array(let items)? = v else { return }
    let store = store ?? EngineDefaults.storePath
    guard SQLiteSideFiles.isFilePath(store) else { return }
    let storePath = Self.lexicalPath(store)
    for (i, item) in items.enumerated() {
      guard case .string(let file)? = item["file"] else { continue }
      let path = Self.lexicalPath(file)
      if path == storePath || path == storePath + ".pending.json" {
        problem(
          "notify[\(i)].file",
          "\"\(file)\" is \(path == storePath ? "the store" : "a file Forage reads beside the store"); "
            + "appending notifications there would destroy it; name another file")
      }
    }
  }

  /// `path` without `.` components, repeated slashes or a `..` that a
  /// component before it cancels: two spellings of one path in the config's
  /// folder compare equal.
  static func lexicalPath(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == "..", let last = parts.last, last != ".." { parts.removeLast() } else { parts.append(part) }
    }
    return (path.hasPrefix("/") ? "/" : "") + parts.joined(separator: "/")
  }

  /// A command channel's `env` (variables and their values) and `passEnv`
  /// (names of Forage's variables); nil with problems when either is wrong
  /// or the channel is not a command (`command` false).
  mutating func commandEnvironment(_ m: [String: JSONValue], at path: String, command: Bool)
    -> (env: [String: String], passEnv: [String])?
  {
    var ok = true
    if !command {
      for key in ["env", "passEnv"] where m[key] != nil {
        problem(join(path, key), "\"\(key)\" applies to command channels only (it sets the environment of their program)")
      }
      return nil
    }
    func badName(_ name: String, at path: String) -> Bool {
      if !ConfigReader.isEnvironmentName(name) {
        problem(path, "not an environment variable name: \"\(name)\" (letters, digits and _, not starting with a digit)")
        return true
      }
      if name == ConfigReader.commandMessageIDVariable {
        problem(path, "\(name) is set by Forage for each notification (its message id); choose another name")
        return true
      }
      return false
    }
    var env: [String: String] = [:]
    if let v = m["env"] {
      let envPath = join(path, "env")
      if case .object(let members) = v {
        for (name, value) in members where name != ConfigReader.commentKey {
          let valuePath = join(envPath, name)
          if badName(name, at: valuePath) {
            ok = false
          } else if let text = string(value, at: valuePath, nonEmpty: false) {
            if text.utf8.contains(0) {
              problem(valuePath, "must not contain a NUL character (\\u0000): an environment value cannot hold one")
              ok = false
            } else {
              env[name] = text
            }
          } else {
            ok = false
          }
        }
      } else {
        problem(envPath, "expected an object of variables and their values, such as {\"LOG_LEVEL\": \"info\"}, found \(v.typeName)")
        ok = false
      }
    }
    var passEnv: [String] = []
    if let v = m["passEnv"] {
      let passPath = join(path, "passEnv")
      if case .array(let items) = v {
        for (i, item) in items.enumerated() {
          let itemPath = "\(passPath)[\(i)]"
          guard let name = string(item, at: itemPath) else {
            ok = false
            continue
          }
          if badName(name, at: itemPath) {
            ok = false
          } else if env[name] != nil {
            problem(itemPath, "\(name) is also set in \"env\"; give it in one of them")
            ok = false
          } else if !passEnv.contains(name) {
            passEnv.append(name)
          }
        }
      } else {
        problem(passPath, "expected an array of environment variable names, such as [\"SLACK_TOKEN\"], found \(v.typeName)")
        ok = false
      }
    }
    return ok ? (env, passEnv) : nil
  }

  /// The target of a channel whose type key is `type`.
  mutating func notifyTarget(_ type: String, _ m: [String: JSONValue], at path: String) -> NotifyChannel.Target? {
    let keyPath = join(path, type)
    switch type {
    case "webhook":
      guard let url = string(m["webhook"], at: keyPath) else { return nil }
      guard URLs.isFetchable(url) else {
        problem(keyPath, "not an absolute http(s) URL: \"\(url)\"")
        return nil
      }
      let env = m["secretEnv"].flatMap { v -> String? in
        if case .string(let s) = v, ConfigReader.isEnvironmentName(s) { return s }
        return nil
      }
      if m["secretEnv"] != nil && env == nil { return nil }
      return .webhook(url: url, secretEnv: env)
    case "command":
      guard let v = m["command"] else { return nil }
      guard case .array(let items) = v else {
        problem(keyPath, "expected an array such as [\"notify-send\", \"Forage\"] (the program and its arguments, run without a shell), found \(v.typeName)")
        return nil
      }
      if items.isEmpty {
        problem(keyPath, "must not be empty: name the program to run")
        return nil
      }
      var argv: [String] = []
      for (i, item) in items.enumerated() {
        if let s = string(item, at: "\(keyPath)[\(i)]") { argv.append(s) }
      }
      return argv.count == items.count ? .command(argv) : nil
    case "file":
      guard let file = string(m["file"], at: keyPath) else { return nil }
      let name = file.split(separator: "/").last.map(String.init) ?? file
      if let side = SQLiteSideFiles.sideFile(named: name) {
        problem(
          keyPath,
          "\"\(file)\" is the name SQLite gives the \(side.role) of a database named \(side.database): the next open "
            + "of that database would read the notifications as its own and replay or delete them; name another file")
        return nil
      }
      return .file(file)
    case "local":
      guard let b = bool(m["local"], at: keyPath) else { return nil }
      if !b {
        problem(keyPath, "must be true (remove the channel to not show notifications on the device)")
        return nil
      }
      return .local
    default:
      guard let b = bool(m["stdout"], at: keyPath) else { return nil }
      if !b {
        problem(keyPath, "must be true (remove the channel to not print notifications)")
        return nil
      }
      return .stdout
    }
  }

  /// `[A-Za-z_][A-Za-z0-9_]*`.
  static func isEnvironmentName(_ s: String) -> Bool {
    guard let first = s.utf8.first, !(first >= 0x30 && first <= 0x39) else { return false }
    return s.utf8.allSatisfy { c in
      (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F
    }
  }

  /// `d` when it is at least `least` (written `leastText` in messages);
  /// otherwise nil with a problem.
  mutating func atLeast(_ d: Duration?, _ least: Duration, _ leastText: String, at path: String) -> Duration? {
    guard let d else { return nil }
    if d < least {
      problem(path, "must be at least \(leastText), found \(Units.format(d))")
      return nil
    }
    return d
  }

  // MARK: A source's keys

  /// Reads a source's `notifyWhen`, `notifyVia` and `history` into `source`,
  /// whose fields (`extract`, or a feed's fixed fields) are already read.
  /// The channel names of `notifyVia` are checked by `checkNotifyVia` once
  /// every channel is known.
  mutating func sourceNotifySettings(_ m: [String: JSONValue], at path: String, into source: inout Source) {
    if let v = m["notifyWhen"] {
      let whenPath = join(path, "notifyWhen")
      if case .array(let items) = v {
        if items.isEmpty {
          problem(
            whenPath,
            "an empty list would never notify; remove notifyWhen to use the default "
              + "(every change, except new records on the source's first crawl)")
        }
        let fieldNames = source.format == .feed ? Extractor.feedFields : source.fields.map(\.name)
        var conditions: [ChangeCondition] = []
        for (i, item) in items.enumerated() {
          if let c = condition(item, at: "\(whenPath)[\(i)]", fields: fieldNames, feed: source.format == .feed) {
            conditions.append(c)
          }
        }
        source.notifyWhen = conditions
      } else {
        problem(whenPath, "expected an array of conditions, found \(v.typeName)")
      }
    }
    if let v = m["notifyVia"] {
      let viaPath = join(path, "notifyVia")
      if let names = strings(v, at: viaPath) {
        if names.isEmpty {
          problem(viaPath, "must name at least one channel; remove notifyVia to use every channel")
        }
        source.notifyVia = names
      }
    }
    if let v = m["history"] {
      source.history = historyRetention(v, at: join(path, "history"))
    }
  }

  /// One entry of `notifyWhen`.
  mutating func condition(_ v: JSONValue, at path: String, fields: [String], feed: Bool) -> ChangeCondition? {
    guard let m = members(v, at: path, allowed: ConfigReader.conditionKeys) else { return nil }
    if let k = m["kind"] {
      var ok = true
      for key in ConfigReader.conditionKeys where key != "kind" && m[key] != nil {
        problem(
          join(path, key),
          "a \"kind\" condition stands alone; put \"\(key)\" in a condition of its own (any one condition that holds notifies)")
        ok = false
      }
      guard let word = string(k, at: join(path, "kind")) else { return nil }
      let kinds = ChangeKind.allCases.map(\.rawValue)
      guard let kind = ChangeKind(rawValue: word) else {
        let hint = Spelling.hint(for: word, in: kinds)
        problem(join(path, "kind"), "unknown kind \"\(word)\"\(hint); expected new, changed, removed or restored")
        return nil
      }
      return ok ? .kind(kind) : nil
    }

    let tests = ConfigReader.conditionTests.filter { m[$0] != nil }
    guard let f = m["field"] else {
      if tests.isEmpty {
        problem(path, "missing: a condition needs \"kind\" or \"field\" (with one test such as \"changes\": true)")
      } else {
        problem(join(path, "field"), "missing: name the field that \"\(tests[0])\" tests")
      }
      return nil
    }
    var ok = true
    let fieldName = string(f, at: join(path, "field"))
    if let name = fieldName, !fields.contains(name) {
      let hint = Spelling.hint(for: name, in: fields)
      problem(join(path, "field"), "no field named \"\(name)\" in \(feed ? "a feed's records" : "extract")\(hint)")
      ok = false
    }
    guard let testKey = tests.first else {
      problem(path, "a field condition needs one test: \(ConfigReader.conditionTests.joined(separator: ", "))")
      return nil
    }
    if tests.count > 1 {
      problem(
        join(path, tests[1]),
        "one test per condition; found \"\(tests[0])\" and \"\(tests[1])\" (write a condition for each: any one that holds notifies)")
      return nil
    }
    guard let test = fieldTest(testKey, m[testKey]!, at: join(path, testKey)), let fieldName, ok else { return nil }
    return .field(fieldName, test)
  }

  /// The test `key` with its value `v`.
  mutating func fieldTest(_ key: String, _ v: JSONValue, at path: String) -> FieldTest? {
    switch key {
    case "below", "above":
      guard case .number(let n) = v, n.isFinite else {
        problem(path, "expected a number, found \(v.description)")
        return nil
      }
      return key == "below" ? .below(n) : .above(n)
    case "contains":
      return string(v, at: path).map { .contains($0) }
    case "matches":
      guard let pattern = string(v, at: path), regex(pattern, at: path) != nil else { return nil }
      return .matches(pattern)
    default:
      guard let b = bool(v, at: path) else { return nil }
      if !b {
        problem(path, "must be true (to not test, leave \"\(key)\" out)")
        return nil
      }
      switch key {
      case "changes": return .changes
      case "increases": return .increases
      case "decreases": return .decreases
      case "appears": return .appears
      default: return .disappears
      }
    }
  }

  /// A source's `history` object.
  mutating func historyRetention(_ v: JSONValue, at path: String) -> HistoryRetention? {
    guard let m = members(v, at: path, allowed: ConfigReader.historyKeys) else { return nil }
    if m["keep"] == nil && m["maxAge"] == nil {
      problem(path, "give \"keep\" (the most changes kept per record), \"maxAge\" or both; remove history to keep every change")
      return nil
    }
    let keep = int(m["keep"], at: join(path, "keep"), min: 1)
    let maxAge = atLeast(
      duration(m["maxAge"], at: join(path, "maxAge")), ConfigReader.shortestHistoryMaxAge, "1h", at: join(path, "maxAge"))
    if (m["keep"] != nil && keep == nil) || (m["maxAge"] != nil && maxAge == nil) { return nil }
    return HistoryRetention(keep: keep, maxAge: maxAge)
  }

  // MARK: Checks across the config

  /// Checks that every source's `notifyVia` names a channel of `notify`.
  /// Reads the JSON again rather than the sources read, so that paths keep
  /// their index when an earlier source failed to read; the channel names
  /// include those of channels with problems of their own, which are
  /// reported already.
  mutating func checkNotifyVia(sources: JSONValue?, notify: JSONValue?) {
    guard case .array(let items)? = sources else { return }
    var names: [String] = []
    if case .array(let channels)? = notify {
      for c in channels {
        if case .string(let name)? = c["name"] {
          names.append(name)
        } else if let type = ConfigReader.notifyTypes.first(where: { c[$0] != nil }) {
          names.append(type)
        }
      }
    }
    for (i, item) in items.enumerated() {
      let viaPath = "sources[\(i)].notifyVia"
      let entries: [(path: String, value: JSONValue)]
      switch item["notifyVia"] {
      case .array(let via)?: entries = via.enumerated().map { ("\(viaPath)[\($0.offset)]", $0.element) }
      case let via?: entries = [(viaPath, via)]
      case nil: continue
      }
      for (path, v) in entries {
        guard case .string(let name) = v, !name.isEmpty, !names.contains(name) else { continue }
        if notify == nil {
          problem(path, "no channel named \"\(name)\": the config has no \"notify\" channels; add a top-level \"notify\" array")
        } else {
          let hint = Spelling.hint(for: name, in: names)
          problem(path, "no channel named \"\(name)\" in notify\(hint)")
        }
      }
    }
  }
}

// MARK: Writing

extension NotifyChannel {
  /// The channel as an entry of the config's `notify` array, with only
  /// non-default settings written.
  var jsonValue: JSONValue {
    var m: [(key: String, value: JSONValue)] = []
    if name != target.typeName { m.append(("name", .string(name))) }
    switch target {
    case .webhook(let url, let secretEnv):
      m.append(("webhook", .string(url)))
      if let secretEnv { m.append(("secretEnv", .string(secretEnv))) }
    case .command(let argv): m.append(("command", .array(argv.map(JSONValue.string))))
    case .file(let path): m.append(("file", .string(path)))
    case .stdout: m.append(("stdout", .bool(true)))
    case .local: m.append(("local", .bool(true)))
    }
    if !env.isEmpty {
      m.append(("env", .object(env.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })))
    }
    if !passEnv.isEmpty { m.append(("passEnv", .array(passEnv.map(JSONValue.string)))) }
    if batch { m.append(("batch", .bool(true))) }
    if timeout != EngineDefaults.notifyTimeout { m.append(("timeout", .string(Units.format(timeout)))) }
    if maxAge != EngineDefaults.notifyMaxAge { m.append(("maxAge", .string(Units.format(maxAge)))) }
    return .object(m)
  }
}

extension ChangeCondition {
  /// The condition as an entry of a source's `notifyWhen`.
  var jsonValue: JSONValue {
    switch self {
    case .kind(let kind):
      return .object([("kind", .string(kind.rawValue))])
    case .field(let name, let test):
      let t: (key: String, value: JSONValue)
      switch test {
      case .changes: t = ("changes", .bool(true))
      case .increases: t = ("increases", .bool(true))
      case .decreases: t = ("decreases", .bool(true))
      case .below(let n): t = ("below", .number(n))
      case .above(let n): t = ("above", .number(n))
      case .contains(let s): t = ("contains", .string(s))
      case .matches(let p): t = ("matches", .string(p))
      case .appears: t = ("appears", .bool(true))
      case .disappears: t = ("disappears", .bool(true))
      }
      return .object([("field", .string(name)), t])
    }
  }
}

extension Source {
  /// The source's `notifyWhen`, `notifyVia` and `history` members, those it has.
  var notifyMembers: [(key: String, value: JSONValue)] {
    var m: [(key: String, value: JSONValue)] = []
    if let notifyWhen { m.append(("notifyWhen", .array(notifyWhen.map(\.jsonValue)))) }
    if let notifyVia { m.append(("notifyVia", .array(notifyVia.map(JSONValue.string)))) }
    if let history {
      var h: [(key: String, value: JSONValue)] = []
      if let keep = history.keep { h.append(("keep", .number(Double(keep)))) }
      if let maxAge = history.maxAge { h.append(("maxAge", .string(Units.format(maxAge)))) }
      m.append(("history", .object(h)))
    }
    return m
  }
}
