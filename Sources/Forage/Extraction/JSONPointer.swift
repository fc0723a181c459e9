/// RFC 6901 JSON Pointers: `/data/items/0/name`.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc6901>
public enum JSONPointer {
  /// Why `pointer` is not a valid JSON Pointer, or nil when it is.
  public static func validate(_ pointer: String) -> String? {
    if pointer.isEmpty { return nil }
    guard pointer.hasPrefix("/") else { return "a JSON Pointer starts with \"/\" (or is empty for the whole document): \"\(pointer)\"" }
    var chars = pointer.unicodeScalars.makeIterator()
    var offset = 0
    while let c = chars.next() {
      offset += 1
      if c == "~" {
        let n = chars.next()
        offset += 1
        if n != "0" && n != "1" { return "invalid escape at character \(offset - 1) of \"\(pointer)\": \"~\" must be followed by 0 or 1" }
      }
    }
    return nil
  }

  /// The reference tokens of a valid pointer, unescaped.
  public static func tokens(_ pointer: String) -> [String] {
    guard !pointer.isEmpty else { return [] }
    return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
      $0.replacingOccurrences("~1", with: "/").replacingOccurrences("~0", with: "~")
    }
  }

  /// Resolves `pointer` in `value`; nil when any step is missing.
  public static func resolve(_ pointer: String, in value: JSONValue) -> JSONValue? {
    var current = value
    for token in tokens(pointer) {
      switch current {
      case .object: guard let next = current[token] else { return nil }; current = next
      case .array(let items):
        guard let i = Int(token), token == String(i), items.indices.contains(i) else { return nil }
        current = items[i]
      default: return nil
      }
    }
    return current
  }
}

extension StringProtocol {
  /// Replaces every occurrence of `target` (no Foundation needed).
  func replacingOccurrences(_ target: String, with replacement: String) -> String {
    let s = String(self)
    guard !target.isEmpty, s.contains(target) else { return s }
    return s.split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}
