import ForageSupport
import Foundation
import Testing

@testable import ForageScheduler

/// Hours as a duration.
func hours(_ h: Double) -> Duration { .milliseconds(Int64(h * 3_600_000)) }
/// Days as a duration.
func days(_ d: Double) -> Duration { hours(d * 24) }

let start = SchedulerDefaults.simulationStart

/// The offset of `date` from the simulation start, in hours.
func hoursSinceStart(_ date: Date) -> Double { date.timeIntervalSince(start) / 3600 }

/// The time of day of `date` (UTC), in hours.
func timeOfDay(_ date: Date) -> Double {
  let h = hoursSinceStart(date)
  return h - (h / 24).rounded(.down) * 24
}

/// A scheduler on a scripted timeline with a quiet log.
func scripted(
  _ initial: DeviceConditions = .chargingOnWiFi, _ events: [DeviceEvent] = [], policy: SchedulingPolicy = SchedulingPolicy(),
  seed: UInt64 = 1, permitted: [String]? = nil, traceDevice: Bool = false
) -> SimulatedScheduler {
  SimulatedScheduler(
    device: DeviceTimeline(initial: initial, events: events), policy: policy, seed: seed,
    permittedIdentifiers: permitted, traceDeviceChanges: traceDevice, log: .silent)
}

/// Daily app opens at `hour` for `count` days.
func dailyOpens(at hour: Double, days count: Int, session: Duration = .seconds(300)) -> [DeviceEvent] {
  (0..<count).map { DeviceEvent(at: hours(Double($0) * 24 + hour), .appOpened(session: session)) }
}

/// A device on battery plugged in from 00:00 to 05:00 each night for
/// `count` days (it charges full, then drains through the day).
func nightlyCharge(days count: Int) -> [DeviceEvent] {
  (0..<count).flatMap { day in
    [DeviceEvent(at: hours(Double(day) * 24), .charging(true)), DeviceEvent(at: hours(Double(day) * 24 + 5), .charging(false))]
  }
}

/// Encodes a trace deterministically.
func encoded(_ trace: Trace) throws -> Data {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  return try encoder.encode(trace)
}

/// A flag a test can flip from another task.
final class Flag: Sendable {
  private let value = Locked(false)
  func set() { value.withLock { $0 = true } }
  var isSet: Bool { value.withLock { $0 } }
}

/// Collects values from concurrent code.
final class Collector<T: Sendable>: Sendable {
  private let items = Locked<[T]>([])
  func append(_ t: T) { items.withLock { $0.append(t) } }
  var all: [T] { items.withLock { $0 } }
}

/// Sleeps even when the current task is cancelled (a stubborn handler that
/// ignores cancellation). `Task.sleep` would throw at once and spin, starving
/// the two-thread cooperative pool on this machine.
func stubbornSleep(milliseconds: Int = 2) async {
  await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { c.resume() }
  }
}
