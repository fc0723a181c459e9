extension Duration {
  /// The duration in seconds as a `Double` (the package's one conversion).
  @inlinable package var seconds: Double {
    let (s, atto) = components
    return Double(s) + Double(atto) / 1e18
  }

  /// The duration in whole milliseconds, rounded towards zero.
  @inlinable package var milliseconds: Int64 {
    let (s, atto) = components
    return s * 1000 + atto / 1_000_000_000_000_000
  }

  /// Reads a duration as people write one in a config or a device profile:
  /// a number (decimals allowed) and a unit, `ms`, `s`, `m`, `h` or `d`,
  /// with white space around it ignored; nil when `text` is not one (no
  /// unit, no number, negative, or too long to count in milliseconds).
  ///
  ///     Duration(parsing: "500ms")   // .milliseconds(500)
  ///     Duration(parsing: "1.5h")    // .seconds(5400)
  ///     Duration(parsing: "15")      // nil: no unit
  ///
  /// The package's one duration parser: the config reader (`Units.duration`)
  /// and device profiles (`DeviceProfile.milliseconds`) both read with it.
  /// The result is rounded to whole milliseconds.
  package init?(parsing text: String) {
    let t = text.trimmingWhitespace()
    // "ms" must not be read as "m" + "s": it is tried first.
    let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
    for (suffix, scale) in units where t.hasSuffix(suffix) {
      let number = t.dropLast(suffix.count)
      // Past about 292 million years the milliseconds no longer fit an Int64.
      guard !number.isEmpty, let v = Double(number), v.isFinite, v >= 0,
        let ms = Int64(exactly: (v * scale * 1000).rounded())
      else { return nil }
      self = .milliseconds(ms)
      return
    }
    return nil
  }
}

extension String {
  /// The string without leading and trailing white space (Unicode's
  /// White_Space property). Returns `self` unchanged, without copying, when
  /// there is nothing to trim.
  package func trimmingWhitespace() -> String {
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
