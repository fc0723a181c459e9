/// What a `Content-Type` value says about a body, for deciding whether to
/// read it.
public enum ContentType {
  /// True when `value` names an HTML or XML type (`text/html`,
  /// `application/xhtml+xml`, `application/rss+xml`, `text/xml`…), compared
  /// without regard to case. An HTML source reads such bodies, and bodies
  /// with no `Content-Type` at all (the parser sniffs them).
  public static func isMarkup(_ value: String) -> Bool {
    var value = value
    return value.withUTF8 { bytes in contains(bytes, "html") || contains(bytes, "xml") }
  }

  /// True when `bytes`, ASCII letters lowered, contain the lower-case `word`.
  private static func contains(_ bytes: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
    let w = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    guard bytes.count >= w.count else { return false }
    @inline(__always) func lower(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }
    for start in 0...(bytes.count - w.count) where lower(bytes[start]) == w[0] {
      var k = 1
      while k < w.count && lower(bytes[start + k]) == w[k] { k += 1 }
      if k == w.count { return true }
    }
    return false
  }
}
