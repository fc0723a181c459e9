// libFuzzer entry point for sitemap reading (Forage) and the inflater
// (ForageSupport).
//
// Built by Fuzz/run-fuzz.sh (target `sitemap`) against the modules compiled
// with -enable-testing. The input is read:
// - as a sitemap file (`SitemapParser.parse`) with a small entry limit: never
//   more entries than the limit, the limit reached exactly when the file is
//   cut there, every loc non-empty, trimmed and within the URL length limit,
//   few problems; each `<lastmod>`-like line of the input goes through
//   `SitemapDate.parse`;
// - as gzip data, and as raw DEFLATE behind a gzip header, with an output
//   limit: never more output than the limit, `limitReached` only at the
//   limit, and the output under a smaller limit a prefix of the output under
//   a larger one (decoding does not depend on where it will be cut);
// - wrapped in a stored gzip member, which decodes back to the input.

@testable import Forage
@testable import ForageSupport
import ForageURL

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

private let sitemapURL = WebURL("https://example.com/sitemap.xml")!

private func checkSitemap(_ bytes: [UInt8]) {
  let limit = 16
  let document = SitemapParser.parse(bytes, url: sitemapURL, maxEntries: limit)
  require(document.entries.count <= limit, "\(document.entries.count) entries over the limit")
  if document.cutAtEntryLimit { require(document.entries.count == limit, "cut before the limit") }
  require(document.problems.count <= SitemapParser.maxProblems + 8, "\(document.problems.count) problems")
  switch document.kind {
  case .unknown: require(document.entries.isEmpty, "entries in a file that is no sitemap")
  case .feed: break
  case .urlset, .index, .text:
    for entry in document.entries {
      require(!entry.loc.isEmpty, "an empty loc")
      require(entry.loc.utf8.count <= SitemapParser.maxURLLength, "a loc over the length limit")
      let ends = [entry.loc.utf8.first!, entry.loc.utf8.last!]
      require(!ends.contains(where: SitemapParser.isSpace), "a loc with space around it")
    }
  }
  let text = String(decoding: bytes.prefix(4096), as: UTF8.self)
  for line in text.split(separator: "\n").prefix(16) where line.count < 64 {
    _ = SitemapDate.parse(String(line))
  }
}

private func checkInflate(_ result: Inflate.Result, limit: Int, _ what: String) {
  require(result.bytes.count <= limit, "\(what): \(result.bytes.count) bytes over the limit \(limit)")
  if result.limitReached { require(result.bytes.count == limit, "\(what): limit reached at \(result.bytes.count)") }
}

private func checkInflate(_ bytes: [UInt8]) {
  let gzipHeader: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
  for (input, what) in [(bytes, "gzip"), (gzipHeader + bytes, "deflate behind a header")] {
    let large = Inflate.gunzip(input, limit: 1 << 20)
    checkInflate(large, limit: 1 << 20, what)
    let small = Inflate.gunzip(input, limit: 100)
    checkInflate(small, limit: 100, what + " (small)")
    require(Array(large.bytes.prefix(small.bytes.count)) == small.bytes, "\(what): a smaller limit changes the output")
    if !small.limitReached { require(small == large, "\(what): under the small limit, yet decoded differently") }
  }
  let raw = Inflate.inflate(bytes, limit: 1 << 20)
  checkInflate(raw, limit: 1 << 20, "raw")

  // A stored member of the input decodes back to it.
  var member = gzipHeader
  var start = 0
  repeat {
    let end = min(start + 65_535, bytes.count)
    let length = UInt16(end - start)
    member.append(end == bytes.count ? 1 : 0)
    member += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
    member += bytes[start..<end]
    start = end
  } while start < bytes.count
  let crc = Inflate.crc32(bytes)
  for shift: UInt32 in [0, 8, 16, 24] { member.append(UInt8(truncatingIfNeeded: crc >> shift)) }
  for shift in [0, 8, 16, 24] { member.append(UInt8(truncatingIfNeeded: bytes.count >> shift)) }
  let back = Inflate.gunzip(member)
  require(back.failure == nil && !back.limitReached && back.bytes == bytes, "a stored member does not decode back")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func sitemapFuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  checkSitemap(bytes)
  checkInflate(bytes)
  return 0
}
