import Foundation
import Testing
import ForageScheduler
@testable import Forage

/// Parses profile text, expecting failure, and returns the problems.
private func profileProblems(_ json: String) -> [String] {
  do {
    let p = try DeviceProfile.parse(Array(json.utf8), file: "me.json")
    Issue.record("expected the profile to be rejected, got \(p)")
    return []
  } catch {
    return error.problems
  }
}

@Suite struct DeviceProfileFileTests {
  /// The example of `DeviceProfile`'s documentation.
  static let documented = """
    {"name": "night-nurse",
     "appOpens": [{"at": "19:30", "jitter": "20m", "session": "5m", "probability": 0.9}],
     "screenSessions": [{"at": "03:00", "jitter": "1h", "session": "10m"}],
     "charging": [{"from": "09:00", "to": "15:00", "jitter": "30m"}],
     "network": {"default": "wifi", "windows": [{"from": "18:30", "to": "19:15", "network": "cellular"}]},
     "lowPowerMode": [{"from": "04:00", "to": "07:00", "probability": 0.2}],
     "backgroundAppRefresh": "available", "forceQuitProbability": 0.05}
    """

  @Test func test_documentedExample_reads() throws {
    let p = try DeviceProfile.parse(Array(DeviceProfileFileTests.documented.utf8))
    var expected = DeviceProfile(name: "night-nurse")
    expected.appOpens = [.init(at: "19:30", jitter: "20m", session: "5m", probability: 0.9)]
    expected.screenSessions = [.init(at: "03:00", jitter: "1h", session: "10m")]
    expected.charging = [.init(from: "09:00", to: "15:00", jitter: "30m")]
    expected.network = .init(default: .wifi, windows: [.init(from: "18:30", to: "19:15", network: .cellular)])
    expected.lowPowerMode = [.init(from: "04:00", to: "07:00", probability: 0.2)]
    expected.backgroundAppRefresh = .available
    expected.forceQuitProbability = 0.05
    #expect(p == expected)
  }

  @Test func test_builtIns_writtenByTheEncoder_readBackEqual() throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    for builtIn in DeviceProfile.builtIns {
      let text = try encoder.encode(builtIn)
      #expect(try DeviceProfile.parse(Array(text)) == builtIn, "\(builtIn.name)")
    }
  }

  /// Issue 14: early expiration of refresh launches is a profile parameter.
  @Test func test_issue14_earlyRefreshExpiration_reads_andIsChecked() throws {
    let p = try DeviceProfile.parse(Array(#"{"name": "x", "earlyRefreshExpiration": "5s", "earlyRefreshExpirationProbability": 0.5}"#.utf8))
    #expect(p.earlyRefreshExpiration == "5s")
    #expect(p.earlyRefreshExpirationProbability == 0.5)
    #expect(try DeviceProfile.parse(Array(#"{"name": "x"}"#.utf8)).earlyRefreshExpiration == nil)
    let problems = profileProblems(#"{"name": "x", "earlyRefreshExpiration": "soon", "earlyRefreshExpirationProbability": 2}"#)
    #expect(problems.count == 2, "\(problems)")
    #expect(problems.contains { $0.hasPrefix("earlyRefreshExpiration:") })
    #expect(problems.contains { $0.hasPrefix("earlyRefreshExpirationProbability:") })
  }

  @Test func test_profileFile_loadsByPath() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("forage-profile-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("commuter-copy.json")
    try JSONEncoder().encode(DeviceProfile.commuter).write(to: file)
    #expect(try DeviceProfile.load(path: file.path) == .commuter)
    #expect(try DeviceProfile.named(orPath: file.path) == .commuter)
    #expect(try DeviceProfile.named(orPath: "server") == .server)
    #expect(throws: ProfileError(file: dir.path + "/none.json", problems: ["no such file"])) {
      try DeviceProfile.named(orPath: dir.path + "/none.json")
    }
    let unknown = #expect(throws: ProfileError.self) { try DeviceProfile.named(orPath: "astronaut") }
    #expect(unknown?.description == """
      unknown profile "astronaut"; built-in profiles: commuter, night-charger, heavy-user, rarely-used, server, \
      or a path to a JSON file
      """)
  }

  @Test func test_issue8_unknownKeys_areProblemsWithTheClosestKey() {
    // "apOpens" used to give a forecast without app opens.
    #expect(profileProblems(#"{"name": "x", "apOpens": [{"at": "07:00"}]}"#)
      == [#"apOpens: unknown key "apOpens" (did you mean "appOpens"?)"#])
    #expect(profileProblems(#"{"name": "x", "appOpens": [{"atx": "07:00"}]}"#) == [
      #"appOpens[0].atx: unknown key "atx" (did you mean "at"?)"#,
      #"appOpens[0].at: missing: give the time of day, such as "07:30""#,
    ])
    #expect(profileProblems(#"{"name": "x", "network": {"defualt": "wifi"}}"#) == [
      #"network.defualt: unknown key "defualt" (did you mean "default"?)"#,
      #"network.default: missing: give the usual network, such as "wifi""#,
    ])
  }

  @Test func test_issue8_everyProblemIsReportedWithItsPath_inWords() throws {
    let json = """
      {"appOpens": [{"at": "25:99", "jitter": "soon", "probability": 1.5}, "07:00"],
       "charging": [{"from": "22:00", "to": 7, "network": "wifi"}],
       "network": {"default": "wi-fi", "windows": [{"from": "08:00", "to": "09:00", "network": "cell"}]},
       "backgroundAppRefresh": "on", "forceQuitProbability": "0.1", "batteryDrainPerHour": -1,
       "refreshPlacement": "asap"}
      """
    let problems = profileProblems(json)
    #expect(problems == [
      "name: missing: every profile needs a name",
      #"appOpens[0].at: "25:99" is not a time of day; expected "HH:MM" such as "07:30""#,
      #"appOpens[0].jitter: expected a duration such as "30s", "15m" or "6h", found "soon""#,
      "appOpens[0].probability: 1.5 is out of range; it must be from 0 to 1",
      "appOpens[1]: expected an object, found a string",
      #"charging[0].network: "network" applies to the windows of "network" only"#,
      "charging[0].to: expected a string, found a number",
      #"network.default: unknown network "wi-fi" (did you mean "wifi"?); expected none, cellular, wifi or wired"#,
      #"network.windows[0].network: unknown network "cell"; expected none, cellular, wifi or wired"#,
      #"backgroundAppRefresh: unknown setting "on"; expected available, denied or restricted"#,
      #"forceQuitProbability: expected a number from 0 to 1, found "0.1""#,
      "batteryDrainPerHour: -1 is out of range; it must be from 0 to 1",
      #"refreshPlacement: unknown placement "asap"; expected beforePredictedOpen or asSoonAsEligible"#,
    ])
    // Sentences about the file, not the decoder's dump.
    let error = try #require(throws: ProfileError.self) { try DeviceProfile.parse(Array(json.utf8), file: "me.json") }
    #expect(error.description.hasPrefix("invalid profile me.json (13 problems):\n  name: missing"))
    for word in ["DecodingError", "CodingKeys", "keyNotFound", "Swift."] { #expect(!error.description.contains(word)) }
  }

  /// Found by the profile fuzzer: a jitter of "10.5d" moved an app open ten
  /// days, so the timeline handed out events out of order, and a jitter or
  /// session of about 10^11 days overflowed when a day was generated.
  @Test func test_jitterOrSessionLongerThanADay_isAProblem() throws {
    let problems = profileProblems("""
      {"name": "x", "appOpens": [{"at": "23:59", "jitter": "10.5d"}, {"at": "01:00", "session": "100000000000d"}],
       "charging": [{"from": "01:00", "to": "02:00", "jitter": "25h"}]}
      """)
    #expect(problems == [
      #"appOpens[0].jitter: "10.5d" is too long; it must be at most 1d"#,
      #"appOpens[1].session: "100000000000d" is too long; it must be at most 1d"#,
      #"charging[0].jitter: "25h" is too long; it must be at most 1d"#,
    ])
    let oneDay = try DeviceProfile.parse(Array(#"{"name": "x", "appOpens": [{"at": "01:00", "jitter": "1d", "session": "24h"}]}"#.utf8))
    #expect(oneDay.appOpens?.first?.jitter == "1d")
    var coded = DeviceProfile(name: "coded")
    coded.appOpens = [.init(at: "01:00", jitter: "2d")]
    #expect(throws: ProfileError.self) { try coded.validate() }
  }

  @Test func test_notJSON_namesLineAndColumn() {
    #expect(profileProblems("{\n  \"name\": \"x\",\n}") == ["not valid JSON: line 3, column 1: expected a member name in double quotes"])
    #expect(profileProblems("[]") == ["expected an object, found an array"])
  }

  @Test func test_issue8_byteOrderMark_isSkipped() throws {
    let p = try DeviceProfile.parse([0xEF, 0xBB, 0xBF] + Array(#"{"name": "bom"}"#.utf8))
    #expect(p == DeviceProfile(name: "bom"))
  }
}
