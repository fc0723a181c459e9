// libFuzzer entry point for the duration and size parsers (Forage's `Units`,
// which device profiles share through `DeviceProfile.milliseconds`).
//
// Built by Fuzz/run-fuzz.sh (target `units`) against the modules compiled with
// -enable-testing. The input is read as a duration and as a size; nothing may
// trap (huge numbers, exponents, odd white space), and:
// - a duration is whole milliseconds, never negative, and the same for a
//   device profile;
// - a duration written by `Units.format` (one decimal place of its unit) reads
//   back within that rounding, and is written the same way again;
// - a size is never negative, and its decimal text reads back as itself.
// The input's first 8 bytes are also taken as a number of milliseconds, to
// format durations of every magnitude.

@testable import Forage
import ForageScheduler

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

/// Whole milliseconds (durations here are at most Int64.max milliseconds).
private func ms(_ d: Duration) -> Int64 {
  d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
}

/// The most `Units.format` may be off by: half a unit of its last digit.
private func tolerance(_ text: String) -> Int64 {
  if text.hasSuffix("ms") { return 0 }
  if text.hasSuffix("s") { return 50 }
  if text.hasSuffix("m") { return 3_000 }
  return 180_000
}

private func checkFormat(_ d: Duration) {
  let text = Units.format(d)
  guard let back = Units.duration(text) else {
    fatalError("Units.format(\(d)) = \(text.debugDescription) does not parse")
  }
  let error = abs(ms(back) - ms(d))
  // Plus Double's rounding: the parser multiplies in Double (1 ms in 2^50).
  require(error <= tolerance(text) + 1 + ms(d) >> 50, "\(d) formatted as \(text.debugDescription) reads back as \(back)")
  require(Units.format(back) == text, "\(text.debugDescription) reads back as \(back), written \(Units.format(back).debugDescription)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func unitsFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  let text = String(decoding: bytes, as: UTF8.self)

  let duration = Units.duration(text)
  if let d = duration {
    require(d >= .zero, "negative duration \(d) from \(text.debugDescription)")
    require(d.components.attoseconds % 1_000_000_000_000_000 == 0, "\(d) from \(text.debugDescription) is not whole milliseconds")
    checkFormat(d)
  }
  require(DeviceProfile.milliseconds(text) == duration.map(ms),
    "a profile reads \(text.debugDescription) as \(String(describing: DeviceProfile.milliseconds(text))) ms, the config as \(String(describing: duration))")

  if let n = Units.size(text) {
    require(n >= 0, "negative size \(n) from \(text.debugDescription)")
    require(Units.size(String(n)) == n, "size \(n) from \(text.debugDescription) does not read back")
  }

  if size >= 8 {
    var raw: UInt64 = 0
    for b in bytes.prefix(8) { raw = raw << 8 | UInt64(b) }
    // Any whole number of milliseconds the config could hold.
    checkFormat(.milliseconds(Int64(raw % UInt64(Int64.max))))
  }
  return 0
}
