import Foundation
import Testing
import ForageStore
@testable import Forage

@Suite struct ExporterTests {
  /// A store holding two records of source "s" and one of "t".
  func filledStore(_ dir: TemporaryDirectory) async throws -> SQLiteStore {
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let crawl = try await store.openCrawl(
      source: "s", seeds: [FrontierSeed(url: "https://x.org/", fingerprint: 1, depth: 0)], now: Date())
    let item = try #require(try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "o", for: .seconds(60), at: Date())).first)
    let records = [
      RecordInput(source: "s", key: "a", url: "https://x.org/a", fieldsJSON: #"{"name":"Lamp, \"big\"","price":12.5}"#, contentHash: 1),
      RecordInput(source: "s", key: "b", url: "https://x.org/b", fieldsJSON: #"{"name":"Bowl","tags":["x","y"]}"#, contentHash: 2),
      RecordInput(source: "t", key: "c", url: "https://x.org/c", fieldsJSON: #"{"name":"line\nbreak"}"#, contentHash: 3),
    ]
    _ = try await store.commit([PageCommit(item: item, outcome: .done, records: records, now: Date())])
    return store
  }

  @Test func test_jsonl_oneObjectPerRecord() async throws {
    let dir = TemporaryDirectory()
    let store = try await filledStore(dir)
    var text = ""
    let n = try await Exporter(store: store).export(format: .jsonl, source: "s") { text += $0 }
    #expect(n == 2)
    let lines = text.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    let first = try JSONValue.parse(lines[0])
    #expect(first["source"] == .string("s"))
    #expect(first["key"] == .string("a"))
    #expect(first["url"] == .string("https://x.org/a"))
    #expect(first["fields"] == (try JSONValue.parse(#"{"name":"Lamp, \"big\"","price":12.5}"#)))
    if case .string(let seen)? = first["firstSeen"] { #expect(seen.hasSuffix("Z")) } else { Issue.record("no firstSeen") }
  }

  @Test func test_csv_columnPerFieldAndQuoting() async throws {
    let dir = TemporaryDirectory()
    let store = try await filledStore(dir)
    var text = ""
    try await Exporter(store: store).export(format: .csv) { text += $0 }
    let rows = text.components(separatedBy: "\r\n")
    #expect(rows[0] == "source,key,url,name,price,tags,firstSeen,lastSeen")
    #expect(rows[1].hasPrefix(#"s,a,https://x.org/a,"Lamp, ""big""",12.5,,"#))
    #expect(rows[2].hasPrefix(#"s,b,https://x.org/b,Bowl,,"[""x"",""y""]","#))
    #expect(rows[3].hasPrefix("t,c,https://x.org/c,\"line\nbreak\",,,"))
    #expect(rows.count == 5 && rows[4].isEmpty)
  }
}

/// The hand-written ISO 8601 dates agree with Foundation's formatter.
@Suite struct ISODateTests {
  @Test func test_string_agreesWithISO8601DateFormatter_overCenturies() {
    let withMS = ISO8601DateFormatter()
    withMS.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    let plain = ISO8601DateFormatter()
    plain.formatOptions = [.withInternetDateTime]
    let day = ISO8601DateFormatter()
    day.formatOptions = [.withFullDate]
    // Millisecond instants as the store keeps them, from 1900 to 2200,
    // with the leap days of 2000 and 2100 (not a leap year) and epoch edges.
    var instants: [Int64] = [0, -1, 1, 86_399_999, 86_400_000, -86_400_000, 951_782_400_000, 951_868_799_999,
                             4_107_542_400_000, 4_107_628_800_000, -2_208_988_800_000, 7_258_118_399_999]
    var x: UInt64 = 0x9E37_79B9_7F4A_7C15
    for _ in 0..<2_000 {
      x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      instants.append(-2_208_988_800_000 + Int64(x >> 24) % 9_467_280_000_000)
    }
    for ms in instants {
      let d = Date(timeIntervalSince1970: Double(ms) / 1000)
      #expect(ISODate.string(d, milliseconds: true) == withMS.string(from: d), "\(ms)")
      #expect(ISODate.string(d) == plain.string(from: d), "\(ms)")
      #expect(ISODate.dateOnly(d) == day.string(from: d), "\(ms)")
    }
  }
}
