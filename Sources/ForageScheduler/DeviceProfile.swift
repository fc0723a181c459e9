import ForageSupport
import Foundation

/// How a person uses a device, day after day: when they open the app, use
/// the phone, charge it, which network they are on. A ``DeviceTimeline``
/// generates each simulated day from a profile with a seeded random source.
///
///     let profile = try DeviceProfile.named("commuter")
///
/// A person writes a profile as a JSON file, which the Forage module reads
/// and validates (`DeviceProfile.load(path:)`: every problem with its JSON
/// path, unknown keys included); the `Codable` conformance is for profiles
/// a program writes and reads back. In JSON, times of day are `"HH:MM"`
/// (UTC) and durations `"30s"`, `"15m"`, `"6h"`; every field but `name` is
/// optional:
///
///     {"name": "night-nurse",
///      "appOpens": [{"at": "19:30", "jitter": "20m", "session": "5m", "probability": 0.9}],
///      "screenSessions": [{"at": "03:00", "jitter": "1h", "session": "10m"}],
///      "charging": [{"from": "09:00", "to": "15:00", "jitter": "30m"}],
///      "network": {"default": "wifi", "windows": [{"from": "18:30", "to": "19:15", "network": "cellular"}]},
///      "lowPowerMode": [{"from": "04:00", "to": "07:00", "probability": 0.2}],
///      "backgroundAppRefresh": "available", "forceQuitProbability": 0.05}
public struct DeviceProfile: Codable, Sendable, Hashable {
  /// Something that happens around a time of day, with a chance each day.
  public struct Occurrence: Codable, Sendable, Hashable {
    /// The time of day, `"HH:MM"`.
    public var at: String
    /// Uniform jitter either side of `at`, e.g. `"20m"`.
    public var jitter: String?
    /// How long it lasts (an app session or a screen session), e.g. `"4m"`.
    public var session: String?
    /// The chance it happens on a given day (default 1).
    public var probability: Double?
    /// Only Monday to Friday.
    public var weekdaysOnly: Bool?
    /// A moment of the day; each parameter has its property's meaning.
    public init(at: String, jitter: String? = nil, session: String? = nil, probability: Double? = nil, weekdaysOnly: Bool? = nil) {
      self.at = at
      self.jitter = jitter
      self.session = session
      self.probability = probability
      self.weekdaysOnly = weekdaysOnly
    }
  }

  /// A stretch of the day, possibly across midnight, with a chance each day.
  public struct Window: Codable, Sendable, Hashable {
    /// Start time of day, `"HH:MM"`.
    public var from: String
    /// End time of day, `"HH:MM"` (before `from`: the next day).
    public var to: String
    /// Uniform jitter applied to both ends, e.g. `"30m"`.
    public var jitter: String?
    /// The chance it happens on a given day (default 1).
    public var probability: Double?
    /// Only Monday to Friday.
    public var weekdaysOnly: Bool?
    /// For network windows: `none`, `cellular`, `wifi`, `wired`.
    public var network: NetworkStatus.Interface?
    /// For network windows: Low Data Mode.
    public var constrained: Bool?
    /// A stretch of the day; each parameter has its property's meaning.
    public init(
      from: String, to: String, jitter: String? = nil, probability: Double? = nil, weekdaysOnly: Bool? = nil,
      network: NetworkStatus.Interface? = nil, constrained: Bool? = nil
    ) {
      self.from = from
      self.to = to
      self.jitter = jitter
      self.probability = probability
      self.weekdaysOnly = weekdaysOnly
      self.network = network
      self.constrained = constrained
    }
  }

  /// The usual network and the stretches of the day on another one.
  public struct NetworkPlan: Codable, Sendable, Hashable {
    /// The network outside the windows.
    public var `default`: NetworkStatus.Interface
    /// Stretches of the day on another network.
    public var windows: [Window]?
    /// A plan; each parameter has its property's meaning.
    public init(default: NetworkStatus.Interface, windows: [Window]? = nil) {
      self.default = `default`
      self.windows = windows
    }
  }

  /// The profile's name, e.g. `commuter`.
  public var name: String
  /// A sentence describing the person.
  public var summary: String?
  /// When the user opens the app.
  public var appOpens: [Occurrence]?
  /// Device use without the app (the screen is on: no processing, refresh still allowed).
  public var screenSessions: [Occurrence]?
  /// When the device is plugged in.
  public var charging: [Window]?
  /// The usual network and its exceptions.
  public var network: NetworkPlan?
  /// When Low Power Mode is on.
  public var lowPowerMode: [Window]?
  /// The Background App Refresh setting (default available).
  public var backgroundAppRefresh: BackgroundRefreshStatus?
  /// The chance the user force-quits the app at the end of a session.
  public var forceQuitProbability: Double?
  /// `false` for a machine without a battery (always on power).
  public var hasBattery: Bool?
  /// Battery drain per hour on battery, as a fraction (default 0.04).
  public var batteryDrainPerHour: Double?
  /// Charge per hour while charging, as a fraction (default 0.4).
  public var batteryChargePerHour: Double?
  /// `asSoonAsEligible` for machines that nobody opens (a server).
  public var refreshPlacement: SchedulingPolicy.RefreshPlacement?
  /// Early expiration of refresh launches, e.g. `"5s"`: a refresh launch on
  /// this device expires (reason `early`) after this long instead of its
  /// full budget, as developers report happening. Off when nil (the default).
  public var earlyRefreshExpiration: String?
  /// The chance a refresh launch expires early (default 1: every one).
  public var earlyRefreshExpirationProbability: Double?
  /// The app fetches its sources in the foreground every time the user opens
  /// it (as most apps do), so the forecast counts each open as a refresh of
  /// every source: the age at an open is then the time since the later of
  /// the last background refresh and the previous open. Off when nil.
  public var refreshOnOpen: Bool?

  /// An empty profile: nothing happens.
  public init(name: String) { self.name = name }

  /// The conditions at midnight of the first day.
  public var initialConditions: DeviceConditions {
    let chargingAtMidnight = (charging ?? []).contains { w in
      guard let f = DeviceProfile.timeOfDay(w.from), let t = DeviceProfile.timeOfDay(w.to) else { return false }
      return f > t || f == 0
    }
    let onPower = hasBattery == false || chargingAtMidnight
    return DeviceConditions(
      isCharging: onPower, batteryLevel: hasBattery == false ? 1 : 0.8,
      network: NetworkStatus(network?.default ?? .wifi),
      backgroundRefreshStatus: backgroundAppRefresh ?? .available)
  }

  // MARK: - Generation

  /// The events of day `day` (0 is the first), in milliseconds from the start.
  func events(forDay day: Int, using random: inout SeededRandom) -> [(Int64, DeviceChange)] {
    let dayStart = Int64(day) * 86_400_000
    let weekday = (day % 7 + 7) % 7  // day 0 is a Monday (the default start)
    let isWeekday = weekday < 5
    var out: [(Int64, DeviceChange)] = []

    func draw(_ at: String, _ jitter: String?) -> Int64? {
      guard let tod = DeviceProfile.timeOfDay(at) else { return nil }
      let j = jitter.flatMap(DeviceProfile.milliseconds) ?? 0
      let offset = j > 0 ? Int64((Double(2 * j) * random.unit()).rounded()) - j : 0
      return dayStart + tod + offset
    }
    func happens(_ p: Double?, _ weekdaysOnly: Bool?) -> Bool {
      let chance = random.chance(p ?? 1)  // always draw, so days stay aligned
      return chance && (weekdaysOnly != true || isWeekday)
    }
    func window(_ w: Window) -> (Int64, Int64)? {
      guard happens(w.probability, w.weekdaysOnly), let start = draw(w.from, w.jitter), var end = draw(w.to, w.jitter)
      else { return nil }
      if end <= start { end += 86_400_000 }
      return (start, end)
    }

    for o in appOpens ?? [] {
      guard happens(o.probability, o.weekdaysOnly), let t = draw(o.at, o.jitter) else { continue }
      let session = o.session.flatMap(DeviceProfile.milliseconds) ?? 180_000
      out.append((t, .appOpened(session: .milliseconds(session))))
      if random.chance(forceQuitProbability ?? 0) {
        out.append((t + session + 1000, .appForceQuit))
      }
    }
    for o in screenSessions ?? [] {
      guard happens(o.probability, o.weekdaysOnly), let t = draw(o.at, o.jitter) else { continue }
      let session = o.session.flatMap(DeviceProfile.milliseconds) ?? 600_000
      out.append((t, .screen(on: true)))
      out.append((t + session, .screen(on: false)))
    }
    if hasBattery != false {
      for w in charging ?? [] {
        guard let (s, e) = window(w) else { continue }
        out.append((s, .charging(true)))
        out.append((e, .charging(false)))
      }
    }
    if let plan = network {
      for w in plan.windows ?? [] {
        guard let (s, e) = window(w) else { continue }
        out.append((s, .network(NetworkStatus(w.network ?? NetworkStatus.Interface.none, isConstrained: w.constrained ?? false))))
        out.append((e, .network(NetworkStatus(plan.default))))
      }
    }
    for w in lowPowerMode ?? [] {
      guard let (s, e) = window(w) else { continue }
      out.append((s, .lowPowerMode(true)))
      out.append((e, .lowPowerMode(false)))
    }
    return out
  }

  /// Reads a time of day, `"HH:MM"` (or `"HH:MM:SS"`), as milliseconds
  /// after midnight; nil when `text` is not one.
  ///
  ///     DeviceProfile.timeOfDay("07:45")   // 27_900_000
  public static func timeOfDay(_ text: String) -> Int64? {
    let parts = text.split(separator: ":").map { Int64($0) }
    guard parts.count >= 2, parts.count <= 3, !parts.contains(where: { $0 == nil }) else { return nil }
    let h = parts[0]!, m = parts[1]!, s = parts.count == 3 ? parts[2]! : 0
    guard (0...24).contains(h), (0..<60).contains(m), (0..<60).contains(s) else { return nil }
    return ((h * 60 + m) * 60 + s) * 1000
  }

  /// The longest jitter or session a profile may give, one day: the timeline
  /// generates days lazily and in order, so an event moved by more than two
  /// days came out of order, and much longer ones overflowed the arithmetic.
  public static let longestJitterOrSession: Int64 = 86_400_000

  /// Reads a duration, `"500ms"`, `"30s"`, `"15m"`, `"6h"`, `"1d"` (a
  /// number, possibly decimal, then a unit), as milliseconds; nil when
  /// `text` is not one.
  ///
  ///     DeviceProfile.milliseconds("1.5h")   // 5_400_000
  ///
  /// The config's durations are read by the same parser.
  public static func milliseconds(_ text: String) -> Int64? {
    Duration(parsing: text)?.milliseconds
  }

  /// Checks every time and duration, so a bad profile fails when loaded.
  ///
  /// - Throws: ``ProfileError`` naming the field and the bad value.
  public func validate() throws(ProfileError) {
    func time(_ s: String, _ field: String) throws(ProfileError) {
      if DeviceProfile.timeOfDay(s) == nil { throw ProfileError("\(name): \(field) \"\(s)\" is not a time of day HH:MM") }
    }
    func duration(_ s: String?, _ field: String) throws(ProfileError) {
      guard let s else { return }
      guard let ms = DeviceProfile.milliseconds(s) else {
        throw ProfileError("\(name): \(field) \"\(s)\" is not a duration like 30s, 15m, 6h")
      }
      if ms > DeviceProfile.longestJitterOrSession { throw ProfileError("\(name): \(field) \"\(s)\" is longer than 1d") }
    }
    func probability(_ p: Double?, _ field: String) throws(ProfileError) {
      if let p, !(0...1).contains(p) { throw ProfileError("\(name): \(field) \(p) is not between 0 and 1") }
    }
    for o in (appOpens ?? []) + (screenSessions ?? []) {
      try time(o.at, "at")
      try duration(o.jitter, "jitter")
      try duration(o.session, "session")
      try probability(o.probability, "probability")
    }
    for w in (charging ?? []) + (lowPowerMode ?? []) + (network?.windows ?? []) {
      try time(w.from, "from")
      try time(w.to, "to")
      try duration(w.jitter, "jitter")
      try probability(w.probability, "probability")
    }
    try probability(forceQuitProbability, "forceQuitProbability")
  }
}

/// A device profile that cannot be used: an unknown name, a value out of
/// range, or a profile file with problems.
public struct ProfileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What is wrong, naming the field and value (for a file: the file, then
  /// one line per problem).
  public let description: String
  /// The problems found in a profile file, each `path: what is wrong`;
  /// empty for other errors.
  public let problems: [String]

  /// An error described by one sentence.
  public init(_ description: String) {
    self.description = description
    self.problems = []
  }

  /// A profile file with the problems found in it, each `path: what is
  /// wrong` (`appOpens[0].at: "25:99" is not a time of day`).
  public init(file: String, problems: [String]) {
    let head = problems.count == 1 ? "invalid profile \(file):" : "invalid profile \(file) (\(problems.count) problems):"
    self.description = ([head] + problems.map { "  \($0)" }).joined(separator: "\n")
    self.problems = problems
  }
}

extension DeviceProfile {
  /// A built-in profile by name (see ``builtIns``).
  ///
  ///     let profile = try DeviceProfile.named("night-charger")
  ///
  /// Profile files are read by the Forage module: `DeviceProfile.load(path:)`,
  /// or `DeviceProfile.named(orPath:)` for a name or a path.
  ///
  /// - Throws: ``ProfileError`` listing the built-in names when none matches.
  public static func named(_ name: String) throws(ProfileError) -> DeviceProfile {
    if let builtIn = builtIns.first(where: { $0.name == name }) { return builtIn }
    throw ProfileError("unknown profile \"\(name)\"; built-in profiles: \(builtIns.map(\.name).joined(separator: ", "))")
  }

  /// The built-in profiles.
  public static var builtIns: [DeviceProfile] { [commuter, nightCharger, heavyUser, rarelyUsed, server] }

  /// Opens the app on the way to and from work (on cellular), at lunch and in
  /// the evening; charges overnight.
  public static var commuter: DeviceProfile {
    var p = DeviceProfile(name: "commuter")
    p.summary = "opens the app on the train (cellular) morning and evening, at lunch and at night; charges overnight"
    p.appOpens = [
      .init(at: "07:50", jitter: "15m", session: "4m", probability: 0.9, weekdaysOnly: true),
      .init(at: "12:30", jitter: "30m", session: "3m", probability: 0.6),
      .init(at: "18:05", jitter: "20m", session: "5m", probability: 0.85, weekdaysOnly: true),
      .init(at: "21:45", jitter: "30m", session: "6m", probability: 0.7),
    ]
    p.screenSessions = [
      .init(at: "06:50", jitter: "10m", session: "15m"),
      .init(at: "10:30", jitter: "45m", session: "10m", probability: 0.8),
      .init(at: "15:30", jitter: "45m", session: "10m", probability: 0.8),
      .init(at: "20:00", jitter: "30m", session: "30m", probability: 0.9),
    ]
    p.charging = [.init(from: "23:15", to: "06:40", jitter: "30m", probability: 0.95)]
    p.network = NetworkPlan(default: .wifi, windows: [
      .init(from: "07:35", to: "08:35", jitter: "10m", weekdaysOnly: true, network: .cellular),
      .init(from: "17:45", to: "18:40", jitter: "10m", weekdaysOnly: true, network: .cellular),
    ])
    p.forceQuitProbability = 0.02
    return p
  }

  /// Charges every night on Wi-Fi; opens the app morning, noon and evening.
  public static var nightCharger: DeviceProfile {
    var p = DeviceProfile(name: "night-charger")
    p.summary = "charges on Wi-Fi every night; opens the app at breakfast, lunch and in the evening"
    p.appOpens = [
      .init(at: "07:30", jitter: "15m", session: "5m", probability: 0.95),
      .init(at: "13:00", jitter: "20m", session: "3m", probability: 0.7),
      .init(at: "20:30", jitter: "30m", session: "8m", probability: 0.9),
    ]
    p.screenSessions = [
      .init(at: "07:00", jitter: "10m", session: "20m"),
      .init(at: "17:00", jitter: "1h", session: "20m", probability: 0.8),
      .init(at: "22:00", jitter: "20m", session: "25m", probability: 0.9),
    ]
    p.charging = [.init(from: "22:30", to: "07:00", jitter: "15m", probability: 1)]
    p.network = NetworkPlan(default: .wifi, windows: [
      .init(from: "09:00", to: "17:30", jitter: "20m", probability: 0.7, weekdaysOnly: true, network: .cellular)
    ])
    return p
  }

  /// Opens the app every hour or so from morning to night; charges twice a
  /// day; Low Power Mode some evenings.
  public static var heavyUser: DeviceProfile {
    var p = DeviceProfile(name: "heavy-user")
    p.summary = "opens the app about every 90 minutes from 08:00 to 23:00; Low Power Mode some evenings; airplane mode some nights"
    p.appOpens = stride(from: 8 * 60, through: 23 * 60, by: 90).map { minutes in
      .init(at: String(format: "%02ld:%02ld", minutes / 60, minutes % 60), jitter: "20m", session: "8m", probability: 0.85)
    }
    p.screenSessions = [.init(at: "08:40", jitter: "30m", session: "40m"), .init(at: "14:40", jitter: "40m", session: "40m")]
    p.charging = [
      .init(from: "00:30", to: "07:30", jitter: "30m", probability: 0.95),
      .init(from: "14:00", to: "15:00", jitter: "30m", probability: 0.4),
    ]
    p.network = NetworkPlan(default: .wifi, windows: [
      .init(from: "08:30", to: "09:15", jitter: "10m", probability: 0.8, weekdaysOnly: true, network: .cellular),
      .init(from: "17:30", to: "18:30", jitter: "15m", probability: 0.8, weekdaysOnly: true, network: .cellular),
      .init(from: "02:00", to: "06:00", jitter: "30m", probability: 0.3, network: NetworkStatus.Interface.none),
    ])
    p.lowPowerMode = [.init(from: "18:00", to: "00:30", jitter: "30m", probability: 0.2)]
    p.forceQuitProbability = 0.05
    p.batteryDrainPerHour = 0.07
    return p
  }

  /// Opens the app about once a week.
  public static var rarelyUsed: DeviceProfile {
    var p = DeviceProfile(name: "rarely-used")
    p.summary = "opens the app about once a week in the evening; charges most nights"
    p.appOpens = [.init(at: "19:30", jitter: "1h", session: "3m", probability: 0.15)]
    p.screenSessions = [
      .init(at: "07:15", jitter: "20m", session: "20m"),
      .init(at: "12:30", jitter: "1h", session: "15m", probability: 0.8),
      .init(at: "20:30", jitter: "40m", session: "40m", probability: 0.9),
    ]
    p.charging = [.init(from: "23:00", to: "07:00", jitter: "40m", probability: 0.9)]
    p.network = NetworkPlan(default: .wifi)
    return p
  }

  /// An always-on machine: wired network, mains power, nobody opens it.
  public static var server: DeviceProfile {
    var p = DeviceProfile(name: "server")
    p.summary = "always on mains power and a wired network; nobody uses the screen"
    p.hasBattery = false
    p.network = NetworkPlan(default: .wired)
    p.refreshPlacement = .asSoonAsEligible
    return p
  }
}
