import ForageSupport

/// Parsing of the config's human units: durations (`500ms`, `30s`, `15m`,
/// `6h`, `1d`) and sizes (`512KiB`, `10MiB`, `1GiB`, `100KB`, `4096`).
public enum Units {
  /// Parses a duration such as `500ms`, `30s`, `1.5m`, `6h`, `1d`.
  /// Returns nil when the text is not a duration.
  ///
  /// The same parser reads the durations of device profiles
  /// (`DeviceProfile.milliseconds(_:)`).
  public static func duration(_ text: String) -> Duration? {
    Duration(parsing: text)
  }

  /// Parses a size such as `512KiB`, `10MiB`, `2GB` or a plain byte count.
  public static func size(_ text: String) -> Int? {
    let t = text.trimmingWhitespace()
    let units: [(String, Double)] = [
      ("KiB", 1024), ("MiB", 1024 * 1024), ("GiB", 1024 * 1024 * 1024),
      ("KB", 1000), ("MB", 1_000_000), ("GB", 1_000_000_000), ("B", 1),
    ]
    for (suffix, scale) in units where t.hasSuffix(suffix) {
      guard let v = Double(String(t.dropLast(suffix.count)).trimmingWhitespace()), v.isFinite, v >= 0 else { return nil }
      return Int(exactly: (v * scale).rounded())
    }
    return Int(t).flatMap { $0 >= 0 ? $0 : nil }
  }

  /// A byte count for a person: `512 B`, `12.3 KiB`, `1 GiB`.
  public static func formatBytes(_ n: Int) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(n)
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    return unit == 0 ? "\(n) B" : String(format1: value) + " " + units[unit]
  }

  /// Formats a duration compactly (`1.5s`, `250ms`, `15m`).
  public static func format(_ d: Duration) -> String {
    let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    // A unit is kept while its number, rounded, stays below the next unit's
    // threshold: 119.96 s is "2m", not "120s" (which would be written "2m" the
    // next time).
    if ms.rounded() < 1000 { return "\(Int(ms.rounded()))ms" }
    let s = ms / 1000
    if (s * 10).rounded() < 1200 { return s == s.rounded() ? "\(Int(s))s" : String(format1: s) + "s" }
    if (s / 6).rounded() < 1200 { return String(format1: s / 60) + "m" }
    return String(format1: s / 3600) + "h"
  }
}

extension String {
  /// One decimal place, without Foundation.
  init(format1 v: Double) {
    let r = (v * 10).rounded() / 10
    self = r == r.rounded() ? String(Int(r)) : String(r)
  }
}


