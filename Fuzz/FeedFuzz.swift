// libFuzzer entry point for feed reading (Forage): RSS 0.9x/2.0, RDF, Atom
// and JSON Feed, told apart by content, through the lenient XML reader.
//
// Built by Fuzz/run-fuzz.sh (target `feed`). The input is parsed as a feed
// with a few extension paths; a document that is no feed throws. Checked:
// - the same bytes give the same feed (no hidden state);
// - entries are bounded by the input's size (no entry made from nothing);
// - every link, author URL and enclosure URL is an absolute URL that parses;
// - every date is ISO 8601 UTC (`yyyy-MM-ddTHH:mm:ssZ`);
// - extension values exist only for the paths asked, and no more of them
//   than elements in the input;
// - problems stay few (one per kind of breakage, not one per byte).
// Seeds: the shared feed corpus (../shared/testdata/feeds), mutated by libFuzzer.

@testable import Forage
import ForageURL

/// Stops with the message (-O drops the messages of `precondition`).
func require(_ condition: Bool, _ message: @autoclosure () -> String = "") {
  if !condition { fatalError(message()) }
}

private let feedURL = WebURL("https://example.com/feeds/feed.xml")!
private let paths = ["itunes:duration", "media:content/@url", "dc:creator", "/_ext/value"].map {
  try! FeedPath.parse($0).get()
}

private func isISODate(_ s: String) -> Bool {
  let b = Array(s.utf8)
  guard b.count == 20, b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
    b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "Z")
  else { return false }
  return [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18].allSatisfy { b[$0] >= 0x30 && b[$0] <= 0x39 }
}

private func checkURL(_ s: String?, _ what: String) {
  guard let s else { return }
  require(WebURL(s) != nil, "\(what) is not an absolute URL: \(s)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let first: Feed
  do { first = try Feed.parse(bytes, url: feedURL, contentType: "application/xml", paths: paths) } catch {
    return 0
  }
  let again = try? Feed.parse(bytes, url: feedURL, contentType: "application/xml", paths: paths)
  require(again == first, "parsing the same bytes twice gave different feeds")
  require(first.entries.count <= max(1, size / 4), "\(first.entries.count) entries from \(size) bytes")
  require(first.problems.count <= 64, "\(first.problems.count) problems")
  let elements = bytes.filter { $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: "{") }.count
  for entry in first.entries {
    checkURL(entry.link, "a link")
    checkURL(entry.authorURL, "an author URL")
    for e in entry.enclosures { checkURL(e.url, "an enclosure URL") }
    for date in [entry.published, entry.updated].compactMap({ $0 }) {
      require(isISODate(date), "a date that is not ISO 8601 UTC: \(date)")
    }
    for (path, values) in entry.extensions {
      require(paths.contains { $0.description == path }, "an extension value for a path not asked: \(path)")
      require(values.count <= elements + 1, "\(values.count) values from \(elements) elements")
    }
  }
  return 0
}
