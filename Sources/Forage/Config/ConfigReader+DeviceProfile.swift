import ForageScheduler

/// Reading a device profile file: the same checks as a config (every
/// problem with its JSON path, unknown keys with the closest valid one),
/// over the shape of `DeviceProfile`.
extension ConfigReader {
  static let profileKeys = [
    "name", "summary", "appOpens", "screenSessions", "charging", "network", "lowPowerMode", "backgroundAppRefresh",
    "forceQuitProbability", "hasBattery", "batteryDrainPerHour", "batteryChargePerHour", "refreshPlacement",
    "earlyRefreshExpiration", "earlyRefreshExpirationProbability", "refreshOnOpen",
  ]
  static let occurrenceKeys = ["at", "jitter", "session", "probability", "weekdaysOnly"]
  static let windowKeys = ["from", "to", "jitter", "probability", "weekdaysOnly"]
  /// Keys that only a window of `network.windows` may have.
  static let networkWindowKeys = ["network", "constrained"]
  static let networkPlanKeys = ["default", "windows"]

  mutating func deviceProfile(_ json: JSONValue) -> DeviceProfile? {
    guard let m = members(json, at: "", allowed: ConfigReader.profileKeys) else { return nil }
    let name = string(m["name"], at: "name")
    if m["name"] == nil { problem("name", "missing: every profile needs a name") }
    var p = DeviceProfile(name: name ?? "")
    p.summary = string(m["summary"], at: "summary", nonEmpty: false)
    p.appOpens = list(m["appOpens"], at: "appOpens") { $0.occurrence($1, at: $2) }
    p.screenSessions = list(m["screenSessions"], at: "screenSessions") { $0.occurrence($1, at: $2) }
    p.charging = list(m["charging"], at: "charging") { $0.window($1, at: $2, network: false) }
    if let n = m["network"] { p.network = networkPlan(n, at: "network") }
    p.lowPowerMode = list(m["lowPowerMode"], at: "lowPowerMode") { $0.window($1, at: $2, network: false) }
    p.backgroundAppRefresh = choice(m["backgroundAppRefresh"], at: "backgroundAppRefresh", what: "setting")
    p.forceQuitProbability = number(m["forceQuitProbability"], at: "forceQuitProbability", in: 0...1)
    p.hasBattery = bool(m["hasBattery"], at: "hasBattery")
    p.refreshOnOpen = bool(m["refreshOnOpen"], at: "refreshOnOpen")
    p.batteryDrainPerHour = number(m["batteryDrainPerHour"], at: "batteryDrainPerHour", in: 0...1)
    p.batteryChargePerHour = number(m["batteryChargePerHour"], at: "batteryChargePerHour", in: 0...1)
    p.refreshPlacement = choice(m["refreshPlacement"], at: "refreshPlacement", what: "placement")
    p.earlyRefreshExpiration = profileDuration(m["earlyRefreshExpiration"], at: "earlyRefreshExpiration")
    p.earlyRefreshExpirationProbability = number(
      m["earlyRefreshExpirationProbability"], at: "earlyRefreshExpirationProbability", in: 0...1)
    return name == nil ? nil : p
  }

  /// The items of an array, each read by `item` at `path[i]`; items with
  /// problems are left out (the problems are reported).
  mutating func list<T>(
    _ v: JSONValue?, at path: String, _ item: (inout ConfigReader, JSONValue, String) -> T?
  ) -> [T]? {
    guard let v else { return nil }
    guard case .array(let items) = v else { problem(path, "expected an array, found \(v.typeName)"); return nil }
    var out: [T] = []
    for (i, value) in items.enumerated() {
      if let t = item(&self, value, "\(path)[\(i)]") { out.append(t) }
    }
    return out
  }

  mutating func occurrence(_ v: JSONValue, at path: String) -> DeviceProfile.Occurrence? {
    guard let m = members(v, at: path, allowed: ConfigReader.occurrenceKeys) else { return nil }
    let at = timeOfDay(m["at"], at: join(path, "at"))
    if m["at"] == nil { problem(join(path, "at"), "missing: give the time of day, such as \"07:30\"") }
    let o = DeviceProfile.Occurrence(
      at: at ?? "", jitter: profileDuration(m["jitter"], at: join(path, "jitter")),
      session: profileDuration(m["session"], at: join(path, "session")),
      probability: number(m["probability"], at: join(path, "probability"), in: 0...1),
      weekdaysOnly: bool(m["weekdaysOnly"], at: join(path, "weekdaysOnly")))
    return at == nil ? nil : o
  }

  /// A stretch of the day; only `network` windows may name a network.
  mutating func window(_ v: JSONValue, at path: String, network: Bool) -> DeviceProfile.Window? {
    let allowed = ConfigReader.windowKeys + ConfigReader.networkWindowKeys
    guard let m = members(v, at: path, allowed: allowed) else { return nil }
    if !network {
      for key in ConfigReader.networkWindowKeys where m[key] != nil {
        problem(join(path, key), "\"\(key)\" applies to the windows of \"network\" only")
      }
    }
    let from = timeOfDay(m["from"], at: join(path, "from"))
    if m["from"] == nil { problem(join(path, "from"), "missing: give the start time of day, such as \"22:30\"") }
    let to = timeOfDay(m["to"], at: join(path, "to"))
    if m["to"] == nil { problem(join(path, "to"), "missing: give the end time of day, such as \"07:00\"") }
    var w = DeviceProfile.Window(
      from: from ?? "", to: to ?? "", jitter: profileDuration(m["jitter"], at: join(path, "jitter")),
      probability: number(m["probability"], at: join(path, "probability"), in: 0...1),
      weekdaysOnly: bool(m["weekdaysOnly"], at: join(path, "weekdaysOnly")))
    if network {
      w.network = choice(m["network"], at: join(path, "network"), what: "network")
      w.constrained = bool(m["constrained"], at: join(path, "constrained"))
    }
    return from == nil || to == nil ? nil : w
  }

  mutating func networkPlan(_ v: JSONValue, at path: String) -> DeviceProfile.NetworkPlan? {
    guard let m = members(v, at: path, allowed: ConfigReader.networkPlanKeys) else { return nil }
    let usual: NetworkStatus.Interface? = choice(m["default"], at: join(path, "default"), what: "network")
    if m["default"] == nil { problem(join(path, "default"), "missing: give the usual network, such as \"wifi\"") }
    let windows = list(m["windows"], at: join(path, "windows")) { $0.window($1, at: $2, network: true) }
    return usual.map { DeviceProfile.NetworkPlan(default: $0, windows: windows) }
  }

  /// A time of day as the profile keeps it (`"07:30"`), checked.
  mutating func timeOfDay(_ v: JSONValue?, at path: String) -> String? {
    guard let s = string(v, at: path) else { return nil }
    guard DeviceProfile.timeOfDay(s) != nil else {
      problem(path, "\"\(s)\" is not a time of day; expected \"HH:MM\" such as \"07:30\"")
      return nil
    }
    return s
  }

  /// A duration as the profile keeps it (`"20m"`), checked: at most a day.
  mutating func profileDuration(_ v: JSONValue?, at path: String) -> String? {
    guard let v else { return nil }
    guard case .string(let s) = v, let ms = DeviceProfile.milliseconds(s) else {
      problem(path, "expected a duration such as \"30s\", \"15m\" or \"6h\", found \(v.description)")
      return nil
    }
    guard ms <= DeviceProfile.longestJitterOrSession else {
      problem(path, "\"\(s)\" is too long; it must be at most 1d")
      return nil
    }
    return s
  }

  /// One of the cases of `T` by its name, with the closest one for a typo.
  mutating func choice<T: RawRepresentable & CaseIterable>(_ v: JSONValue?, at path: String, what: String) -> T?
  where T.RawValue == String {
    guard let name = string(v, at: path) else { return nil }
    if let value = T(rawValue: name) { return value }
    let names = T.allCases.map(\.rawValue)
    let hint = Spelling.hint(for: name, in: names)
    let expected = names.dropLast().joined(separator: ", ") + " or " + names.last!
    problem(path, "unknown \(what) \"\(name)\"\(hint); expected \(expected)")
    return nil
  }
}
