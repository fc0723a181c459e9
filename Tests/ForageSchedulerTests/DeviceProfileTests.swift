import Foundation
import Testing

@testable import ForageScheduler

@Suite struct DeviceProfileTests {
  @Test func test_builtIns_validateAndAreNamed() throws {
    #expect(DeviceProfile.builtIns.map(\.name) == ["commuter", "night-charger", "heavy-user", "rarely-used", "server"])
    for p in DeviceProfile.builtIns {
      try p.validate()
      #expect(try DeviceProfile.named(p.name) == p)
    }
  }

  @Test func test_unknownName_listsBuiltIns() {
    do {
      _ = try DeviceProfile.named("astronaut")
      Issue.record("should throw")
    } catch {
      #expect(error.description.contains("commuter"))
      #expect(error.description.contains("astronaut"))
    }
  }

  @Test func test_unknownName_doesNotOfferFiles() {
    // Files are read by the Forage module (DeviceProfile.named(orPath:)).
    #expect(throws: ProfileError("unknown profile \"me.json\"; built-in profiles: commuter, night-charger, heavy-user, rarely-used, server")) {
      try DeviceProfile.named("me.json")
    }
  }

  @Test func test_profile_generatesItsDays() throws {
    var p = DeviceProfile(name: "night-nurse")
    p.appOpens = [.init(at: "19:30", jitter: "20m", session: "5m", probability: 1)]
    p.charging = [.init(from: "09:00", to: "15:00")]
    p.network = .init(default: .wifi, windows: [.init(from: "18:30", to: "19:15", network: .cellular)])
    p.backgroundAppRefresh = .denied
    p.forceQuitProbability = 0
    try p.validate()
    #expect(p.initialConditions.backgroundRefreshStatus == .denied)
    var r = SeededRandom(seed: 1)
    let events = p.events(forDay: 1, using: &r)
    let open = try #require(events.first { if case .appOpened = $0.1 { return true } else { return false } })
    let tod = Double(open.0 - 86_400_000) / 3_600_000
    #expect(tod >= 19.5 - 1.0 / 3 && tod <= 19.5 + 1.0 / 3)
    #expect(events.contains { $0.1 == .charging(true) && $0.0 == 86_400_000 + 9 * 3_600_000 })
  }

  @Test func test_validate_rejectsBadValuesWithTheField() {
    var badTime = DeviceProfile(name: "x")
    badTime.appOpens = [.init(at: "25:99")]
    #expect(throws: ProfileError.self) { try badTime.validate() }
    var badDuration = DeviceProfile(name: "x")
    badDuration.charging = [.init(from: "01:00", to: "02:00", jitter: "soon")]
    do {
      try badDuration.validate()
      Issue.record("should throw")
    } catch {
      #expect(error.description.contains("soon"))
    }
  }

  @Test func test_profileError_listsTheProblemsOfAFile() {
    let one = ProfileError(file: "me.json", problems: ["name: missing"])
    #expect(one.description == "invalid profile me.json:\n  name: missing")
    let two = ProfileError(file: "me.json", problems: ["a: x", "b: y"])
    #expect(two.description == "invalid profile me.json (2 problems):\n  a: x\n  b: y")
    #expect(two.problems == ["a: x", "b: y"])
  }

  @Test func test_codable_roundTripsEveryBuiltIn() throws {
    for p in DeviceProfile.builtIns {
      #expect(try JSONDecoder().decode(DeviceProfile.self, from: JSONEncoder().encode(p)) == p)
    }
  }

  @Test func test_durationAndTimeParsing() {
    #expect(DeviceProfile.milliseconds("500ms") == 500)
    #expect(DeviceProfile.milliseconds("30s") == 30_000)
    #expect(DeviceProfile.milliseconds("1.5h") == 5_400_000)
    #expect(DeviceProfile.milliseconds("2d") == 172_800_000)
    #expect(DeviceProfile.milliseconds("m") == nil)
    #expect(DeviceProfile.timeOfDay("07:45") == Int64(27_900_000))
    #expect(DeviceProfile.timeOfDay("7") == nil)
  }

  @Test func test_timeline_isOrderedAcrossDays() {
    var cursor = TimelineCursor(DeviceTimeline(profile: .commuter), seed: 4)
    var last: Int64 = -1
    var count = 0
    while let t = cursor.peekTime(horizon: 30 * 86_400_000) {
      #expect(t >= last)
      last = t
      _ = cursor.pop()
      count += 1
    }
    #expect(count > 30 * 8)
  }

  @Test func test_overnightCharging_endsOnTheFirstMorning() {
    let profile = DeviceProfile.nightCharger  // charges 22:30–07:00 with probability 1
    #expect(profile.initialConditions.isCharging)
    var cursor = TimelineCursor(DeviceTimeline(profile: profile), seed: 8)
    var unplugged: Int64?
    while unplugged == nil, let t = cursor.peekTime(horizon: 86_400_000) {
      if case .charging(false) = cursor.pop().1 { unplugged = t }
    }
    let hour = unplugged.map { Double($0) / 3_600_000 }
    #expect(hour.map { $0 > 6.5 && $0 < 7.5 } == true, "first unplug at \(String(describing: hour)) h")
  }

  @Test func test_serverProfile_runsRefreshWhenDue() async throws {
    let s = SimulatedScheduler(device: .server, seed: 1, log: .silent)
    s.register("r", model: ModelBehavior(duration: .constant(.seconds(5)), resubmitAfter: .seconds(900)))
    s.finishLaunching()
    try s.submit(AppRefreshTaskRequest(identifier: "r"))
    await s.advance(by: hours(1))
    #expect(s.trace.count(.launched) == 5)  // 0, 15, 30, 45, 60 minutes
  }
}
