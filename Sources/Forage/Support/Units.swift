/// Parsing of the config's human units: durations (`500ms`, `30s`, `15m`,
/// `6h`, `1d`) and sizes (`512KiB`, `10MiB`, `1GiB`, `100KB`, `4096`).
public enum Units {
  /// Parses a duration such as `500ms`, `30s`, `1.5m`, `6h`, `1d`.
  /// Returns nil when the text is not a duration.
  public static func duration(_ text: String) -> Duration? {
    let t = text.trimmingWhitespace()
    let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
    for (suffix, scale) in units where t.hasSuffix(suffix) {
      let number = t.dropLast(suffix.count)
      // "ms" must not be read as "m" + "s"; the order above tries "ms" first.
      // Past about 292 million years the milliseconds no longer fit an Int64.
      guard !number.isEmpty, let v = Double(number), v.isFinite, v >= 0,
            let ms = Int64(exactly: (v * scale * 1000).rounded()) else { return nil }
      return .milliseconds(ms)
    }
    return nil
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

  /// Formats a duration compactly (`1.5s`, `250ms`, `15m`).
  public static func format(_ d: Duration) -> String {
    let ms = Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    if ms < 1000 { return "\(Int(ms.rounded()))ms" }
    let s = ms / 1000
    if s < 120 { return s == s.rounded() ? "\(Int(s))s" : String(format1: s) + "s" }
    if s < 7200 { return String(format1: s / 60) + "m" }
    return String(format1: s / 3600) + "h"
  }
}

extension String {
  /// One decimal place, without Foundation.
  init(format1 v: Double) {
    let r = (v * 10).rounded() / 10
    self = r == r.rounded() ? String(Int(r)) : String(r)
  }

  /// The string without leading and trailing white space (Unicode's
  /// White_Space property). Returns `self` unchanged, without copying, when
  /// there is nothing to trim.
  func trimmingWhitespace() -> String {
    // Fast path: nothing to trim when both ends are visible ASCII.
    if let first = utf8.first, let last = utf8.last, first > 0x20, first < 0x7F, last > 0x20, last < 0x7F {
      return self
    }
    let scalars = unicodeScalars
    var start = scalars.startIndex
    var end = scalars.endIndex
    while start < end, scalars[start].properties.isWhitespace { start = scalars.index(after: start) }
    while end > start, scalars[scalars.index(before: end)].properties.isWhitespace { end = scalars.index(before: end) }
    if start == scalars.startIndex && end == scalars.endIndex { return self }
    return String(scalars[start..<end])
  }
}

extension Duration {
  /// The duration in seconds as a Double.
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
