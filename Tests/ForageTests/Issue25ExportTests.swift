import Foundation
import Testing
import ForageStore
@testable import Forage

/// Issue 25: CSV export neutralises cells a spreadsheet would run as
/// formulas (OWASP's CSV injection advice), unless asked not to.
@Suite struct Issue25ExportTests {
  func store(_ dir: TemporaryDirectory, fields: String) async throws -> SQLiteStore {
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let crawl = try await store.openCrawl(
      source: "s", seeds: [FrontierSeed(url: "https://x.org/", fingerprint: 1, depth: 0)], now: Date())
    let item = try #require(try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "o", for: .seconds(60), at: Date())).first)
    let record = RecordInput(source: "s", key: "=1+1", url: "https://x.org/a", fieldsJSON: fields, contentHash: 1)
    _ = try await store.commit([PageCommit(item: item, outcome: .done, records: [record], now: Date())])
    return store
  }

  @Test func test_issue25_csvCellsThatStartLikeFormulasGetAQuote_numbersDoNot() async throws {
    let dir = TemporaryDirectory()
    let fields = #"{"a":"=HYPERLINK(\"http://evil\",\"x\")","b":"+1+cmd","c":"-2+3","d":"@SUM(A1)","e":"\tx","f":"\rx","#
      + #""g":"-3.5","h":-3.5,"i":"+12","j":"-1e3","k":"plain","l":"1-2"}"#
    let store = try await store(dir, fields: fields)
    var text = ""
    try await Exporter(store: store).export(format: .csv) { text += $0 }
    let row = text.components(separatedBy: "\r\n")[1]
    #expect(
      row.hasPrefix(
        #"s,'=1+1,https://x.org/a,"'=HYPERLINK(""http://evil"",""x"")",'+1+cmd,'-2+3,'@SUM(A1),'"# + "\tx,\"'\rx\","
          + "-3.5,-3.5,+12,-1e3,plain,1-2,"), "\(row.debugDescription)")

    var raw = ""
    try await Exporter(store: store).export(format: .csv, csvFormulas: true) { raw += $0 }
    let rawRow = raw.components(separatedBy: "\r\n")[1]
    #expect(rawRow.hasPrefix(#"s,=1+1,https://x.org/a,"=HYPERLINK(""http://evil"",""x"")",+1+cmd,-2+3,@SUM(A1),"#), "\(rawRow)")
  }

  @Test func test_issue25_plainNumbers() {
    for n in ["0", "-3.5", "+12", "-1e3", "2.5E-7", "-0.0"] { #expect(Exporter.isPlainNumber(n), "\(n)") }
    for t in ["", "-", "+", "-.5", "-3.", "-1e", "-2+3", "1-2", "--1", "-1 ", "-∞"] { #expect(!Exporter.isPlainNumber(t), "\(t)") }
  }
}
