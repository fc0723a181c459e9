/// The text form of a page's out-links in `pages.links`.
///
/// One link per line. A link on the page's own origin is stored from its
/// path (`/p/2?x=1`), the origin (`https://example.com`) being taken from
/// the page's URL when read back; any other link is stored whole. A whole
/// absolute URL starts with its scheme, never with `/`, so the two forms
/// cannot be confused. This roughly halves what a crawl writes per page.
///
/// Links are absolute URLs as the WHATWG URL parser serializes them, which
/// never contain a line feed.
package enum LinkList {
  private static let slash = UInt8(ascii: "/")

  /// `scheme://host[:port]` of an absolute URL, or nil.
  static func origin(of url: String) -> Substring? {
    let utf8 = url.utf8
    guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
    let afterColon = utf8.index(after: colon)
    guard utf8[afterColon...].starts(with: "//".utf8) else { return nil }
    let rest = utf8[utf8.index(afterColon, offsetBy: 2)...]
    guard let path = rest.firstIndex(of: slash) else { return url[...] }
    return url[..<path]
  }

  package static func encode(_ links: [String], pageURL: String) -> String {
    String(decoding: encodedBytes(links, pageURL: pageURL), as: UTF8.self)
  }

  /// ``encode(_:pageURL:)``'s text as UTF-8 bytes (valid UTF-8: it is made of
  /// whole strings and newlines), for binding without making a `String`.
  package static func encodedBytes(_ links: [String], pageURL: String) -> [UInt8] {
    guard !links.isEmpty else { return [] }
    let origin: [UInt8] = origin(of: pageURL).map { Array($0.utf8) } ?? []
    var bytes: [UInt8] = []
    bytes.reserveCapacity(links.reduce(0) { $0 + $1.utf8.count + 1 })
    for (index, link) in links.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: "\n")) }
      var link = link
      link.withUTF8 { utf8 in
        let n = origin.count
        // Same origin and a path follows: keep the path only.
        if n > 0, utf8.count > n, utf8[n] == slash, utf8.prefix(n).elementsEqual(origin) {
          bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[n...]))
        } else {
          bytes.append(contentsOf: utf8)
        }
      }
    }
    return bytes
  }

  package static func decode(_ text: String, pageURL: String) -> [String] {
    guard !text.isEmpty else { return [] }
    let origin = origin(of: pageURL)
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      if let origin, line.utf8.first == slash { return String(origin) + line }
      return String(line)
    }
  }
}
