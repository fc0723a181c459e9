import Foundation
import Testing
import ForageStore
@testable import ForageCLI

@Suite struct TerminalTests {
  @Test func test_progressLine_saysRateFailuresAndTimeLeft() {
    var s = RunSummary()
    s.pagesFetched = 90
    s.pagesFailed = 10
    s.recordsNew = 7
    let line = progressLine(s, elapsed: .seconds(4), budget: .seconds(30))
    #expect(line == "pages 100 (10 failed) · 25/s · records 7 new, 0 changed · 0 KiB · 26s left")
    #expect(progressLine(s, elapsed: .seconds(200), budget: nil).contains("0.5/s"))
    #expect(progressLine(s, elapsed: .seconds(40), budget: .seconds(30)).hasSuffix("0s left"))
  }

  @Test func test_quiet_andNoProgress_turnTheLiveLineOff() throws {
    var args = try ArgumentList(["--quiet"], declaring: GlobalArguments.all, exclusive: [])
    var t = Terminal()
    t.read(&args)
    #expect(t.quiet && !t.drawsProgress)
    var args2 = try ArgumentList(["--no-progress"], declaring: GlobalArguments.all, exclusive: [])
    var t2 = Terminal()
    t2.read(&args2)
    #expect(!t2.showsProgress && !t2.drawsProgress)
  }

  @Test func test_quietExport_printsNoNote() throws {
    let dir = TemporaryDirectory()
    // An empty store: export writes a file of no records and says so, unless --quiet.
    let store = dir.file("s.sqlite")
    _ = try SQLiteStore(path: store)
    let loud = try runForage(["export", "--store", store, "--out", dir.file("a.jsonl")])
    #expect(loud.status == 0 && loud.stderr.contains("wrote 0 records"))
    let quiet = try runForage(["--quiet", "export", "--store", store, "--out", dir.file("b.jsonl")])
    #expect(quiet.status == 0 && quiet.stderr.isEmpty)
  }
}
