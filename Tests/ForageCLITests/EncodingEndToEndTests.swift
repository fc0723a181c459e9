import Foundation
import ForageTestSupport
import Testing

@testable import ForageStore

/// Pages in the legacy encodings of the issue, declared only by
/// `<meta charset>` or only by the HTTP header, read through `forage run`
/// (records and the encoding recorded with each page) and `forage query`.
@Suite struct EncodingEndToEndTests {
  /// (the Encoding Standard's name, the label the page declares, the text,
  /// its bytes from Python's codecs: cp932, euc_jp, iso2022_jp, gbk, gb18030,
  /// big5, cp949, koi8_r and cp1251).
  static let pages: [(name: String, label: String, text: String, hex: String)] = [
    ("Shift_JIS", "shift_jis", "\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{30DA}\u{30FC}\u{30B8}", "93FA967B8CEA82CC8379815B8357"),
    ("EUC-JP", "euc-jp", "\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{30DA}\u{30FC}\u{30B8}", "C6FCCBDCB8ECA4CEA5DAA1BCA5B8"),
    ("ISO-2022-JP", "iso-2022-jp", "\u{65E5}\u{672C}\u{8A9E}\u{306E}\u{30DA}\u{30FC}\u{30B8}", "1B2442467C4B5C386C244E255A213C25381B2842"),
    ("GBK", "gbk", "\u{4E2D}\u{6587}\u{7F51}\u{9875}", "D6D0CEC4CDF8D2B3"),
    ("gb18030", "gb18030", "\u{4E2D}\u{6587}\u{7F51}\u{9875}\u{1F600}", "D6D0CEC4CDF8D2B39439FC36"),
    ("Big5", "big5", "\u{7E41}\u{9AD4}\u{4E2D}\u{6587}\u{7DB2}\u{9801}", "C163C5E9A4A4A4E5BAF4ADB6"),
    ("EUC-KR", "euc-kr", "\u{D55C}\u{AD6D}\u{C5B4} \u{C6F9} \u{D398}\u{C774}\u{C9C0}", "C7D1B1B9BEEE20C0A520C6E4C0CCC1F6"),
    ("KOI8-R", "koi8-r",
     "\u{420}\u{443}\u{441}\u{441}\u{43A}\u{430}\u{44F} \u{441}\u{442}\u{440}\u{430}\u{43D}\u{438}\u{446}\u{430}",
     "F2D5D3D3CBC1D120D3D4D2C1CEC9C3C1"),
    ("windows-1251", "windows-1251",
     "\u{420}\u{443}\u{441}\u{441}\u{43A}\u{430}\u{44F} \u{441}\u{442}\u{440}\u{430}\u{43D}\u{438}\u{446}\u{430}",
     "D0F3F1F1EAE0FF20F1F2F0E0EDE8F6E0"),
  ]

  static func bytes(_ hex: String) -> [UInt8] {
    let chars = Array(hex.utf8)
    return stride(from: 0, to: chars.count, by: 2).map { UInt8(String(decoding: chars[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
  }

  /// `/meta/NAME` declares its encoding only in `<meta charset>` (the
  /// header says text/html); `/header/NAME` only in the Content-Type.
  static func routes() -> [String: Route] {
    var routes: [String: Route] = [:]
    for page in pages {
      let body = bytes(page.hex)
      let meta = Array("<html><head><meta charset=\"\(page.label)\"><title>t</title></head><body><h1>".utf8) + body
        + Array("</h1></body></html>".utf8)
      let plain = Array("<html><head><title>t</title></head><body><h1>".utf8) + body + Array("</h1></body></html>".utf8)
      routes["/meta/\(page.name)"] = .fixed(TestResponse(headers: [("Content-Type", "text/html")], body: meta))
      routes["/header/\(page.name)"] = .fixed(
        TestResponse(headers: [("Content-Type", "text/html; charset=\(page.label)")], body: plain))
    }
    return routes
  }

  @Test func test_issue15_run_legacyEncodings_byMetaAndByHeader_extractTextAndRecordTheEncoding() throws {
    let server = try TestServer(routes: Self.routes())
    defer { server.stop() }
    let dir = TemporaryDirectory()
    var sources: [String] = []
    for page in Self.pages {
      for way in ["meta", "header"] {
        sources.append(
          #"{"name": "\#(way)-\#(page.name)", "url": "\#(server.url("/\(way)/\(page.name)"))", "extract": {"title": "h1"}}"#)
      }
    }
    let config = try dir.write(
      "forage.json",
      #"{"fetch": {"robotsTxt": false, "perHostDelay": "0s"}, "sources": [\#(sources.joined(separator: ", "))]}"#)
    let store = dir.file("forage.sqlite")
    let run = try runForage(["run", "--config", config, "--store", store, "--budget", "60s"])
    #expect(run.status == 0, "\(run.stderr)")
    let export = try runForage(["export", "--store", store, "--format", "jsonl"])
    #expect(export.status == 0, "\(export.stderr)")
    var titles: [String: String] = [:]
    for line in export.stdout.split(separator: "\n") {
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      let fields = object?["fields"] as? [String: Any] ?? object ?? [:]
      if let source = object?["source"] as? String, let title = fields["title"] as? String { titles[source] = title }
    }
    let db = try SQLiteConnection(path: store, busyTimeout: .seconds(5))
    defer { try? db.close() }
    let recorded = try db.uncachedStatement("SELECT url, encoding FROM pages").rows { ($0.string(0), $0.optionalString(1)) }
    let encodings = Dictionary(recorded.map { ($0.0, $0.1) }, uniquingKeysWith: { a, _ in a })
    for page in Self.pages {
      for way in ["meta", "header"] {
        #expect(titles["\(way)-\(page.name)"] == page.text, "\(way) \(page.name): \(export.stdout.prefix(300))")
        #expect(encodings[server.url("/\(way)/\(page.name)")] == .some(page.name), "\(way) \(page.name)")
      }
    }
  }

  @Test func test_issue15_query_legacyEncodings_byMetaAndByHeader() throws {
    let server = try TestServer(routes: Self.routes())
    defer { server.stop() }
    for page in Self.pages {
      for way in ["meta", "header"] {
        let r = try runForage(["query", server.url("/\(way)/\(page.name)"), "h1", "--text"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == page.text + "\n", "\(way) \(page.name)")
      }
    }
    // A file declares nothing: --charset says what it is.
    let dir = TemporaryDirectory()
    let file = dir.file("sjis.html")
    try Data(Array("<h1>".utf8) + Self.bytes(Self.pages[0].hex)).write(to: URL(fileURLWithPath: file))
    #expect(try runForage(["query", file, "h1", "--text", "--charset", "sjis"]).stdout == Self.pages[0].text + "\n")
  }
}
