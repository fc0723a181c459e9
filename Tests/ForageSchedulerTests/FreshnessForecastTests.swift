import Foundation
import Testing

@testable import ForageScheduler

/// Equal within a millisecond (dates are doubles).
func close(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) < 0.001 } ?? false }

@Suite struct FreshnessForecastTests {
  func at(_ h: Double) -> Date { start.addingTimeInterval(h * 3600) }

  @Test func test_agesAtAppOpens() {
    var trace = Trace(start: start)
    trace.events = [
      TraceEvent(time: at(1), kind: .appOpened),  // never refreshed: age 1 h
      TraceEvent(time: at(2), kind: .launched, identifier: "r", launch: 1),
      TraceEvent(time: at(2), kind: .completed, identifier: "r", launch: 1, success: true),
      TraceEvent(time: at(2.5), kind: .appOpened),  // 30 min
      TraceEvent(time: at(5), kind: .launched, identifier: "r", launch: 2),
      TraceEvent(time: at(5), kind: .completed, identifier: "r", launch: 2, success: false),
      TraceEvent(time: at(6), kind: .appOpened),  // failure does not refresh: 4 h
    ]
    trace.end = at(6)
    let f = FreshnessForecast(trace: trace, sources: ["r": ["prices"]])
    let prices = f.sources[0]
    #expect(prices.source == "prices")
    #expect(prices.samples == 3)
    #expect(prices.refreshes == 1)
    #expect(prices.samplesNeverRefreshed == 1)
    #expect(close(prices.medianAge, 3600))
    #expect(close(prices.worstAge, 4 * 3600))
    #expect(close(prices.p95Age, 4 * 3600))
    #expect(prices.freshShare.map { abs($0 - 1.0 / 3) < 1e-9 } == true)
    #expect(f.appOpens == 3)
    let task = f.tasks[0]
    #expect(task.launches == 2 && task.succeeded == 1 && task.failed == 1)
    #expect(f.description.contains("prices"))
    #expect(f.description.contains("Launches per task"))
  }

  /// Issue 14: an app refreshes when the user opens it. With
  /// `refreshOnOpen` each open counts as a refresh after its age is measured,
  /// so with no background refresh at all (Background App Refresh off) the
  /// age at an open is the time since the previous open, not since the start.
  @Test func test_issue14_refreshOnOpen_agesSinceThePreviousOpen() {
    var trace = Trace(start: start)
    trace.events = [
      TraceEvent(time: at(10), kind: .appOpened),  // 10 h: nothing before
      TraceEvent(time: at(12), kind: .appOpened),  // 2 h: the open at 10 h fetched
      TraceEvent(time: at(13), kind: .completed, identifier: "r", launch: 1, success: true),
      TraceEvent(time: at(13.5), kind: .appOpened),  // 30 min: the background refresh is later than the open
      TraceEvent(time: at(37.5), kind: .appOpened),  // 24 h
    ]
    trace.end = at(40)
    let plain = FreshnessForecast(trace: trace, sources: ["r": ["prices"]])
    #expect(plain.sources[0].worstAge.map { $0 > 24 * 3600 } == true)  // 24.5 h since the refresh at 13 h
    let f = FreshnessForecast(trace: trace, sources: ["r": ["prices"]], refreshOnOpen: true)
    let prices = f.sources[0]
    #expect(f.refreshOnOpen)
    #expect(prices.refreshes == 1, "refreshes counts background refreshes")
    #expect(prices.samplesNeverRefreshed == 1)
    #expect(close(prices.worstAge, 24 * 3600))
    #expect(close(prices.medianAge, 2 * 3600))
    #expect(prices.freshShare == 0.25)
    #expect(f.description.contains("before its own fetch on opening lands"))

    var off = Trace(start: start)  // Background App Refresh off: nothing ever launches
    off.events = [at(8), at(20), at(32), at(44)].map { TraceEvent(time: $0, kind: .appOpened) }
    off.end = at(48)
    let seen = FreshnessForecast(trace: off, sources: ["r": ["prices"]], refreshOnOpen: true).sources[0]
    #expect(close(seen.medianAge, 12 * 3600) && close(seen.worstAge, 12 * 3600))
    #expect(close(FreshnessForecast(trace: off, sources: ["r": ["prices"]]).sources[0].worstAge, 44 * 3600))
  }

  @Test func test_reportedSources_countEvenOnFailure() {
    var trace = Trace(start: start)
    trace.events = [
      TraceEvent(time: at(1), kind: .completed, identifier: "r", launch: 1, success: false, refreshedSources: ["a"]),
      TraceEvent(time: at(2), kind: .appOpened),
    ]
    trace.end = at(2)
    let f = FreshnessForecast(trace: trace, sources: ["r": ["a", "b"]])
    #expect(close(f.sources.first { $0.source == "a" }?.medianAge, 3600))
    #expect(close(f.sources.first { $0.source == "b" }?.medianAge, 7200))
    #expect(f.notes.contains { $0.contains("source b was never refreshed") })
  }

  @Test func test_noAppOpens_samplesHourly() {
    var trace = Trace(start: start)
    trace.events = [TraceEvent(time: at(0.5), kind: .completed, identifier: "r", launch: 1, success: true)]
    trace.end = at(3)
    let f = FreshnessForecast(trace: trace, sources: ["r": ["a"]])
    #expect(f.sampledHourly)
    #expect(f.sources[0].samples == 3)
    #expect(close(f.sources[0].worstAge, 2.5 * 3600))
  }

  @Test func test_notes_explainWhyATaskNeverRan() async throws {
    let s = scripted(.chargingOnWiFi, dailyOpens(at: 9, days: 3))
    s.register("p", model: ModelBehavior())
    s.submitWhenEnteringBackground(ProcessingTaskRequest(identifier: "p", requiresExternalPower: true))
    s.finishLaunching()
    await s.advance(by: .zero)
    // Half a day on battery (a longer one would reach a critically low battery).
    let unplug = scripted(DeviceConditions(isCharging: false, batteryLevel: 0.9), dailyOpens(at: 9, days: 1))
    unplug.register("p", model: ModelBehavior())
    unplug.submitWhenEnteringBackground(ProcessingTaskRequest(identifier: "p", requiresExternalPower: true))
    unplug.finishLaunching()
    await unplug.advance(by: hours(12))
    let f = FreshnessForecast(trace: unplug.trace, sources: ["p": ["catalog"]])
    #expect(f.notes.contains { $0.contains("p never ran") && $0.contains("external power") }, "\(f.notes)")
    let silent = FreshnessForecast(trace: s.trace, sources: ["q": ["x"]])
    #expect(silent.notes.contains { $0.contains("q never ran: no request was submitted") })
  }

  @Test func test_forecast_isCodable() throws {
    var trace = Trace(start: start)
    trace.events = [TraceEvent(time: at(1), kind: .appOpened)]
    let f = FreshnessForecast(trace: trace, sources: ["r": ["a"]])
    let data = try JSONEncoder().encode(f)
    let back = try JSONDecoder().decode(FreshnessForecast.self, from: data)
    #expect(back.sources == f.sources)
  }
  /// Issue 14: several seeds sum up as median with the p10–p90 range
  /// (nearest rank over the seeds).
  @Test func test_issue14_distribution_isMedianAndP10P90OverSeeds() {
    let figure = ForecastDistribution.Figure((1...10).map(Double.init).reversed())
    #expect(figure.median == 5)
    #expect(figure.p10 == 1)
    #expect(figure.p90 == 9)
    #expect(ForecastDistribution.Figure([]).median == nil)
  }
}
