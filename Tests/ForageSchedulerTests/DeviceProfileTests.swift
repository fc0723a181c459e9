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

  @Test func test_jsonProfile_decodesAndGenerates() throws {
    let json = """
      {"name": "night-nurse",
       "appOpens": [{"at": "19:30", "jitter": "20m", "session": "5m", "probability": 1}],
       "charging": [{"from": "09:00", "to": "15:00"}],
       "network": {"default": "wifi", "windows": [{"from": "18:30", "to": "19:15", "network": "cellular"}]},
       "backgroundAppRefresh": "denied", "forceQuitProbability": 0}
      """
    let p = try DeviceProfile.decode(Data(json.utf8))
    #expect(p.name == "night-nurse")
    #expect(p.initialConditions.backgroundRefreshStatus == .denied)
    var r = SeededRandom(seed: 1)
    let events = p.events(forDay: 1, using: &r)
    let open = try #require(events.first { if case .appOpened = $0.1 { return true } else { return false } })
    let tod = Double(open.0 - 86_400_000) / 3_600_000
    #expect(tod >= 19.5 - 1.0 / 3 && tod <= 19.5 + 1.0 / 3)
    #expect(events.contains { $0.1 == .charging(true) && $0.0 == 86_400_000 + 9 * 3_600_000 })
  }

  @Test func test_badValues_areRejectedWithTheField() {
    let badTime = #"{"name": "x", "appOpens": [{"at": "25:99"}]}"#
    #expect(throws: ProfileError.self) { try DeviceProfile.decode(Data(badTime.utf8)) }
    let badDuration = #"{"name": "x", "charging": [{"from": "01:00", "to": "02:00", "jitter": "soon"}]}"#
    do {
      _ = try DeviceProfile.decode(Data(badDuration.utf8))
      Issue.record("should throw")
    } catch {
      #expect(error.description.contains("soon"))
    }
    #expect(throws: ProfileError.self) { try DeviceProfile.decode(Data("{}".utf8)) }
  }

  @Test func test_profileFile_loads() throws {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("forage-profile-\(UUID().uuidString).json")
    defer { try? FileManager.default.removeItem(at: url) }
    try JSONEncoder().encode(DeviceProfile.commuter).write(to: url)
    #expect(try DeviceProfile.named(url.path) == DeviceProfile.commuter)
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
