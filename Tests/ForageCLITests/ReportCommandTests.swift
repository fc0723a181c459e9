import Foundation
import Testing
import ForageTestSupport

/// Chromium, when installed (Debian package `chromium`).
let chromiumPath = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first {
  FileManager.default.isExecutableFile(atPath: $0)
}

@Suite(.serialized) struct ReportCommandTests {
  static let hostile = "<script>alert(1)</script>"

  /// A store with two launches of a shop whose first item's name is
  /// hostile markup and whose price changed, and a config over it.
  private func store(_ dir: TemporaryDirectory) throws -> (store: String, config: String, server: TestServer) {
    func page(price: Int) -> String {
      "<li class=item><b class=name>&lt;script&gt;alert(1)&lt;/script&gt;</b> <span class=price>$\(price)</span></li>"
        + "<li class=item><b class=name>Desk</b> <span class=price>$80</span></li>"
    }
    let site = dir.file("site")
    try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: false)
    try page(price: 12).write(toFile: site + "/items.html", atomically: true, encoding: .utf8)
    let server = try TestServer(directory: site)
    let config = try dir.write(
      "forage.json",
      """
      {"store": "s.sqlite",
       "tasks": [{"id": "shop.refresh", "sources": ["shop"], "every": "1h"}],
       "sources": [{"name": "shop", "url": "\(server.url("/items.html"))", "items": ".item", "key": ["name"],
                    "extract": {"name": ".name", "price": {"css": ".price", "type": "number"}},
                    "fetch": {"robotsTxt": false, "perHostDelay": "0s"}}]}
      """)
    #expect(try runForage(["run", "--config", config]).status == 0)
    try page(price: 9).write(toFile: site + "/items.html", atomically: true, encoding: .utf8)
    #expect(try runForage(["run", "--config", config]).status == 0)
    return (dir.file("s.sqlite"), config, server)
  }

  @Test func test_report_writesTheFile_refusesAFolder_andAMissingStore() throws {
    let dir = TemporaryDirectory()
    let (store, config, server) = try store(dir)
    defer { server.stop() }
    let out = dir.file("report.html")
    let r = try runForage(["report", "--store", store, "--config", config, "--out", out])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout.isEmpty)
    #expect(r.stderr.contains("wrote \(out)"))
    let html = try String(contentsOfFile: out, encoding: .utf8)
    #expect(html.hasPrefix("<!DOCTYPE html>"))
    #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    #expect(!html.lowercased().contains("<script"))
    #expect(html.contains("<del>12</del> → <ins>9</ins>"))
    #expect(html.contains("3 simulated days on the commuter profile"))

    // Replaced when it is a regular file.
    try "old".write(toFile: out, atomically: true, encoding: .utf8)
    #expect(try runForage(["report", "--store", store, "--out", out]).status == 0)
    #expect(try String(contentsOfFile: out, encoding: .utf8).hasPrefix("<!DOCTYPE html>"))

    // A folder: refused, nothing touched.
    let folder = dir.file("folder")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try "keep".write(toFile: folder + "/inside.txt", atomically: true, encoding: .utf8)
    let refused = try runForage(["report", "--store", store, "--out", folder])
    #expect(refused.status == 2)
    #expect(refused.stderr.contains("it is a folder"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["inside.txt"])
    // The store itself: refused.
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    #expect(try runForage(["report", "--store", store, "--out", store]).status == 2)
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)

    // No store: exit 2, nothing created.
    let missing = try runForage(["report", "--store", dir.file("nope.sqlite"), "--out", dir.file("r2.html")])
    #expect(missing.status == 2)
    #expect(missing.stderr.contains("no store at"))
    #expect(!FileManager.default.fileExists(atPath: dir.file("nope.sqlite")))
    #expect(!FileManager.default.fileExists(atPath: dir.file("r2.html")))
    // --out is required.
    #expect(try runForage(["report", "--store", store]).status == 2)
  }

  @Test(.enabled(if: chromiumPath != nil, "Chromium is not installed (Debian: apt-get install chromium); skipped"))
  func test_chromium_rendersTheReport_hostileTextStaysText_andFitsAPhone() throws {
    let chromium = try #require(chromiumPath)
    let dir = TemporaryDirectory()
    let (store, config, server) = try store(dir)
    defer { server.stop() }
    let out = dir.file("report.html")
    #expect(try runForage(["report", "--store", store, "--config", config, "--out", out]).status == 0)

    let common = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--user-data-dir=" + dir.file("profile")]
    let dump = try run(chromium, common + ["--dump-dom", "file://" + out])
    #expect(dump.status == 0, "\(dump.stderr)")
    let dom = dump.stdout
    // The browser built the page: sections, the source, the change, the numbers.
    #expect(dom.contains("<h2>Launches</h2>") && dom.contains("<h2>Recent changes</h2>"))
    #expect(dom.contains("<b class=\"name\">shop</b>"))
    #expect(dom.contains("<del>12</del> → <ins>9</ins>"))
    #expect(dom.contains("2 completed"))
    #expect(dom.contains("<svg"))
    // The hostile name is a text node: serialised escaped, never an element.
    #expect(!dom.lowercased().contains("<script"))
    #expect(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

    // A phone-width screenshot.
    let png = dir.file("phone.png")
    let shot = try run(chromium, common + ["--screenshot=" + png, "--window-size=400,900", "--hide-scrollbars", "file://" + out])
    #expect(shot.status == 0, "\(shot.stderr)")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: png))
    #expect(bytes.count > 1000)
    #expect(bytes.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
  }

  /// Runs a program to completion; its standard error goes through a file
  /// (read after it exits), so neither pipe can fill up and block it.
  private func run(_ path: String, _ arguments: [String]) throws -> CommandResult {
    let errors = TemporaryDirectory()
    let errorFile = errors.file("stderr")
    _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = arguments
    let out = Pipe()
    p.standardOutput = out
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorFile))
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let e = (try? Data(contentsOf: URL(fileURLWithPath: errorFile))) ?? Data()
    return CommandResult(
      status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
  }
}
