import Foundation

/// A change of the simulated device's state.
public enum DeviceChange: Codable, Sendable, Hashable {
  /// Plugged in (`true`) or unplugged.
  case charging(Bool)
  /// The battery level, from 0 to 1.
  case batteryLevel(Double)
  case network(NetworkStatus)
  case lowPowerMode(Bool)
  case backgroundAppRefresh(BackgroundRefreshStatus)
  case thermalState(ThermalState)
  /// The user turns the screen on or off (without the app). Nested `on`s count:
  /// the screen is off again after as many `off`s.
  case screen(on: Bool)
  /// The user opens the app for `session`; the screen is on meanwhile, and the
  /// app enters the background when the session ends.
  case appOpened(session: Duration)
  /// The user force-quits the app: nothing launches until the next open.
  case appForceQuit
}

/// A device change at an offset from the start of the simulation.
public struct DeviceEvent: Codable, Sendable, Hashable {
  /// The offset from the start of the simulation.
  public var at: Duration
  /// What changes.
  public var change: DeviceChange
  /// A change `at` this offset from the start.
  public init(at: Duration, _ change: DeviceChange) {
    self.at = at
    self.change = change
  }
}

/// What happens to the simulated device over time: scripted events, a
/// profile generated day by day, or both.
///
///     let timeline = DeviceTimeline(initial: .chargingOnWiFi, events: [
///       DeviceEvent(at: .seconds(8 * 3600), .appOpened(session: .seconds(120))),
///       DeviceEvent(at: .seconds(9 * 3600), .network(.none)),
///     ])
///
/// Times of day in profiles are UTC hours from the start of the first day.
public struct DeviceTimeline: Sendable {
  /// The conditions at the start.
  public var initial: DeviceConditions
  /// Scripted events (sorted when the simulation starts).
  public var events: [DeviceEvent]
  /// A profile generating events for every day, if any.
  public var profile: DeviceProfile?

  /// A timeline of scripted events from `initial` conditions.
  public init(initial: DeviceConditions = .chargingOnWiFi, events: [DeviceEvent] = []) {
    self.initial = initial
    self.events = events
    self.profile = nil
  }

  /// A timeline generated from a profile, plus optional scripted events.
  public init(profile: DeviceProfile, events: [DeviceEvent] = []) {
    self.initial = profile.initialConditions
    self.events = events
    self.profile = profile
  }

  /// Conditions that never change (and no app opens).
  public static func constant(_ conditions: DeviceConditions) -> DeviceTimeline {
    DeviceTimeline(initial: conditions)
  }
}

/// Hands out a timeline's events in time order, generating profile days lazily.
struct TimelineCursor: Sendable {
  static let dayMs: Int64 = 86_400_000
  private var buffer: [(time: Int64, seq: Int, change: DeviceChange)] = []
  private var seq = 0
  /// The next day to generate; starts at -1 so that windows crossing the
  /// first midnight (charging 23:00–07:00) also end on the first morning.
  private var generatedDays = -1
  private let profile: DeviceProfile?
  private let seed: UInt64

  init(_ timeline: DeviceTimeline, seed: UInt64) {
    profile = timeline.profile
    self.seed = seed
    for event in timeline.events { insert(max(0, event.at.milliseconds), event.change) }
  }

  private mutating func insert(_ time: Int64, _ change: DeviceChange) {
    var lo = 0, hi = buffer.count
    while lo < hi {
      let mid = (lo + hi) / 2
      if buffer[mid].time <= time { lo = mid + 1 } else { hi = mid }
    }
    buffer.insert((time, seq, change), at: lo)
    seq += 1
  }

  private mutating func generateDay() {
    guard let profile else { return }
    var random = SeededRandom(seed: seed &+ UInt64(bitPattern: Int64(generatedDays)) &* 0x9E37_79B9_7F4A_7C15)
    for (t, change) in profile.events(forDay: generatedDays, using: &random) where t >= 0 {
      insert(t, change)
    }
    generatedDays += 1
  }

  /// The time of the next event up to `horizon`, if any. Profile days are
  /// generated until nothing a later day produces can precede the head
  /// (a day's events reach at most a day and a half past its start).
  mutating func peekTime(horizon: Int64) -> Int64? {
    if profile != nil {
      while true {
        let safeBefore = Int64(generatedDays - 2) * TimelineCursor.dayMs
        if let head = buffer.first, head.time < safeBefore { break }
        if safeBefore > horizon { break }
        generateDay()
      }
    }
    guard let head = buffer.first, head.time <= horizon else { return nil }
    return head.time
  }

  /// The first event up to `horizon` for which `match` gives a value,
  /// without consuming anything. Profile days are generated as far as
  /// needed (each day from its own seed, so generating early changes nothing).
  mutating func first<T>(through horizon: Int64, where match: (DeviceChange) -> T?) -> (time: Int64, reason: T)? {
    if profile != nil {
      while Int64(generatedDays - 2) * TimelineCursor.dayMs <= horizon { generateDay() }
    }
    for event in buffer {
      if event.time > horizon { break }
      if let value = match(event.change) { return (event.time, value) }
    }
    return nil
  }

  mutating func pop() -> (Int64, DeviceChange) {
    let head = buffer.removeFirst()
    return (head.time, head.change)
  }
}

extension DeviceChange: CustomStringConvertible {
  /// A short phrase: `charging`, `unplugged`, `network wifi`, `screen on`…
  public var description: String {
    switch self {
    case .charging(let on): on ? "charging" : "unplugged"
    case .batteryLevel(let level): "battery \(Int((level * 100).rounded()))%"
    case .network(let status): "network \(status)"
    case .lowPowerMode(let on): on ? "low power mode on" : "low power mode off"
    case .backgroundAppRefresh(let status): "background app refresh \(status.rawValue)"
    case .thermalState(let state): "thermal \(state.rawValue)"
    case .screen(let on): on ? "screen on" : "screen off"
    case .appOpened(let session): "app opened for \(TraceFormat.duration(seconds: session.seconds))"
    case .appForceQuit: "app force-quit"
    }
  }
}
