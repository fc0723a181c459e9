import Foundation

/// Text that compares and hashes as its UTF-8 bytes, as SQLite, URL parsers
/// and servers read it. A `String` compares by canonical equivalence: "é"
/// written as one scalar and as "e" with a combining accent are one string,
/// but two record keys, two hrefs, two URLs. Dictionaries keyed by what
/// leaves the process use this.
///
///     var seen: Set<UTF8Key> = [UTF8Key("caf\u{E9}")]
///     seen.contains(UTF8Key("cafe\u{301}"))  // false
package struct UTF8Key: Hashable, Sendable {
  /// The text.
  package let text: Substring

  package init(_ text: String) { self.text = text[...] }
  package init(_ text: Substring) { self.text = text }

  package static func == (a: UTF8Key, b: UTF8Key) -> Bool {
    var x = a.text
    var y = b.text
    return x.withUTF8 { p in
      y.withUTF8 { q in
        p.count == q.count && (p.count == 0 || memcmp(p.baseAddress!, q.baseAddress!, p.count) == 0)
      }
    }
  }

  package func hash(into hasher: inout Hasher) {
    var text = text
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

extension UTF8Key: ExpressibleByStringLiteral {
  package init(stringLiteral value: String) { self.init(value) }
}
