// libFuzzer entry point for device profile files: `DeviceProfile.parse`
// (Forage), what `forage simulate --profile FILE` reads, and the days
// ForageScheduler generates from a profile.
//
// Built by Fuzz/run-fuzz.sh (target `profile`) against the modules compiled
// with -enable-testing. The input is parsed as a profile file: it gives a
// profile or a `ProfileError` listing problems, never a crash. A profile it
// accepts
// - passes `validate()`;
// - written with JSONEncoder (as a program saves one), reads back equal;
// - generates eight days of events (two seeds) without trapping, handed out in
//   time order.

import Foundation
import Forage
@testable import ForageScheduler

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

private let week: Int64 = 8 * 86_400_000

@_cdecl("LLVMFuzzerTestOneInput")
public func profileFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let profile: DeviceProfile
  do {
    profile = try DeviceProfile.parse(bytes, file: "fuzz.json")
  } catch {
    require(!error.problems.isEmpty, "a ProfileError without problems: \(error)")
    return 0
  }
  do {
    try profile.validate()
  } catch {
    fatalError("an accepted profile fails validate(): \(error)")
  }
  let encoder = JSONEncoder()
  encoder.outputFormatting = .sortedKeys
  guard let encoded = try? encoder.encode(profile) else { fatalError("JSONEncoder cannot write \(profile)") }
  do {
    let again = try DeviceProfile.parse(Array(encoded), file: "encoded.json")
    require(again == profile, "written and read back differently: \(String(decoding: encoded, as: UTF8.self))")
  } catch {
    fatalError("the written profile is rejected: \(error)\n\(String(decoding: encoded, as: UTF8.self))")
  }
  _ = profile.initialConditions
  for seed in [UInt64(1), 0xDEAD_BEEF] {
    var cursor = TimelineCursor(DeviceTimeline(profile: profile), seed: seed)
    var last = Int64.min
    var count = 0
    while count < 10_000, let t = cursor.peekTime(horizon: week) {
      require(t >= last, "events out of order: \(t) after \(last)")
      last = t
      _ = cursor.pop()
      count += 1
    }
  }
  return 0
}
