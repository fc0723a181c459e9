import Foundation
import Testing
@testable import ForageStore
import ForageTestSupport

@Suite struct CommandLineTests {
  /// The whole text, as generated from RunCommand's declarations.
  @Test func test_runHelp_isTheDocumentedText() throws {
    let r = try runForage(["run", "--help"])
    #expect(r.status == 0)
    #expect(r.stderr.isEmpty)
    #expect(r.stdout == """
      Usage: forage run [--config FILE] [--task ID | --source NAME ...]
                        [--budget DURATION] [--store PATH] [--json]

      Runs one launch now: fetches the sources within the budget, stores their
      records, and prints a summary. A launch stopped by its budget saves its
      place; the next run continues the same crawl. With --task the launch
      goes on as the daemon's launch of that task does: queued downloads (a
      source's downloadEnclosures, forage download) get what is left of the
      budget (an appRefresh task only small ones), and a processing task
      prunes the change history.

      Options:
        --config FILE      The config file (default: forage.json).
        --task ID          Run the sources of this task, with its budget.
        --source NAME      Run this source (repeatable; default: every source).
        --budget DURATION  Time allowed, e.g. 30s, 5m (default: the task's, else 5m).
        --store PATH       A SQLite file, or a postgres:// URL (workers started
                           together on one form a fleet) (default: the config's
                           "store", else forage.sqlite beside the config).
        --json             Print the summary as JSON.
        --verbose          Also show each error's internal detail, for bug reports.
        --quiet            Print only results and errors: no notes, no progress line.
        --no-progress      No live progress line (it shows only on a terminal, and not
                           with NO_COLOR).
        -h, --help         Show this help.

      SIGINT (Ctrl-C) or SIGTERM stops the launch as its budget would: in-flight
      fetches and notification deliveries get a short grace (a command still
      running then is stopped, and its notification stays pending), everything
      done is committed, the summary is printed, and the exit status is 130
      (SIGINT) or 143 (SIGTERM). A second signal kills any command still running
      and quits at once. The next run continues either way.

      Exit status: 0 success (also when stopped by the budget), 1 the job failed,
      2 bad input, 130/143 stopped by a signal.

      """)
  }

  @Test func test_mainHelp_listsEveryCommandAndTheGlobalOptions() throws {
    let r = try runForage(["--help"])
    #expect(r.status == 0)
    for name in ["run", "daemon", "simulate", "export", "query", "demo"] {
      #expect(r.stdout.contains("\n  \(name) "), "missing \(name)")
    }
    #expect(r.stdout.contains("\n  --verbose  "))
    #expect(r.stdout.contains("\n  -h, --help  "))
    #expect(try runForage(["help"]).stdout == r.stdout)
    // Without a command: the same text, on standard error, exit 2.
    let bare = try runForage([])
    #expect(bare.status == 2)
    #expect(bare.stderr == r.stdout)
  }

  @Test func test_help_worksAnywhere_andWinsOverMistakes() throws {
    let help = try runForage(["query", "--help"]).stdout
    #expect(help.hasPrefix("Usage: forage query "))
    for arguments in [
      ["query", "-h"], ["help", "query"], ["-h", "query"], ["--verbose", "query", "--help"],
      ["query", "p.html", "--frobnicate", "--text", "-h"], ["query", "--attr", "--help"],
    ] {
      let r = try runForage(arguments)
      #expect(r.status == 0, "\(arguments)")
      #expect(r.stdout == help, "\(arguments)")
    }
    // After "--", -h is an argument like any other.
    let r = try runForage(["query", "--", "-h"])
    #expect(r.status == 2)
    #expect(r.stderr.contains("missing SELECTOR"))
  }

  @Test func test_unknownCommandAndOption_exit2() throws {
    let a = try runForage(["frobnicate"])
    #expect(a.status == 2)
    #expect(a.stderr.contains("unknown command \"frobnicate\""))
    let b = try runForage(["run", "--bugdet", "3s"])
    #expect(b.status == 2)
    #expect(b.stderr == "forage run: unknown option --bugdet (did you mean --budget?)\nRun 'forage run --help' for usage.\n")
    #expect(b.stdout.isEmpty)
    let c = try runForage(["run", "--budget", "soon"])
    #expect(c.status == 2)
    #expect(c.stderr.contains("--budget expects a duration"))
    let d = try runForage(["simluate"])
    #expect(d.stderr.hasPrefix("forage: unknown command \"simluate\" (did you mean simulate?)"))
    let e = try runForage(["--verbos", "run"])
    #expect(e.status == 2)
    #expect(e.stderr.hasPrefix("forage: unknown option --verbos (did you mean --verbose?)"))
  }

  @Test func test_missingValue_exit2() throws {
    let r = try runForage(["export", "--store"])
    #expect(r.status == 2)
    #expect(r.stderr.hasPrefix("forage export: --store needs a value: --store PATH\n"))
  }

  @Test func test_verbose_isAcceptedBeforeAndAfterTheCommand() throws {
    let dir = TemporaryDirectory()
    let page = try dir.write("p.html", "<p>a</p><p>b</p>")
    #expect(try runForage(["--verbose", "query", page, "p", "--count"]).stdout == "2\n")
    #expect(try runForage(["query", page, "--verbose", "p", "--count"]).stdout == "2\n")
  }

  /// docs/cli.md is `forage help --markdown`: regenerated, never edited.
  @Test func test_docsCLI_isInStepWithTheCode() throws {
    let generated = try runForage(["help", "--markdown"])
    #expect(generated.status == 0)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let file = try String(contentsOf: root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
    #expect(
      file == generated.stdout,
      "docs/cli.md is not what the commands declare; regenerate it with scripts/generate-cli-docs")
    for command in ["run", "daemon", "simulate", "export", "query", "demo"] {
      #expect(file.contains("\n## forage \(command)\n"))
    }
    #expect(file.contains("--verbose"))
  }

  @Test func test_invalidConfig_exit2_namesEveryProblem_writesNothing() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", #"""
      {"sources": [{"name": "a", "url": "https://example.com/", "extract": {"price": {"css": "div[", "tpye": "number"}}}]}
      """#)
    let r = try runForage(["run", "--config", config, "--store", dir.file("s.sqlite")])
    #expect(r.status == 2)
    #expect(r.stderr.contains("sources[0].extract.price.css: invalid CSS selector"))
    #expect(r.stderr.contains(#"sources[0].extract.price.tpye: unknown key "tpye" (did you mean "type"?)"#))
    #expect(!FileManager.default.fileExists(atPath: dir.file("s.sqlite")))
  }

  @Test func test_issue8_configWithoutSources_exit2_writesNothing() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", #"{"sources": []}"#)
    let r = try runForage(["run", "--config", config, "--store", dir.file("s.sqlite")])
    #expect(r.status == 2)
    #expect(r.stderr.contains("sources: the config has no sources; add at least one"))
    #expect(!FileManager.default.fileExists(atPath: dir.file("s.sqlite")))
  }

  @Test func test_issue8_configWithByteOrderMark_runs() throws {
    let dir = TemporaryDirectory()
    let config = dir.file("forage.json")
    let text = #"{"sources": [{"name": "a", "url": "https://x.org/"}], "fetch": {"concurrency": 1e400}}"#
    try Data([0xEF, 0xBB, 0xBF] + Array(text.utf8)).write(to: URL(fileURLWithPath: config))
    let r = try runForage(["run", "--config", config, "--store", dir.file("s.sqlite")])
    #expect(r.status == 2)
    // Past the mark, to the number: columns count from after the mark.
    #expect(r.stderr.contains("line 1, column 80: the number 1e400 is too large"), "\(r.stderr)")
  }

  @Test func test_issue8_storeInAMissingFolder_isASentence() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", #"{"sources": [{"name": "a", "url": "http://127.0.0.1:9/"}]}"#)
    let store = dir.file("no-such-folder/x.sqlite")
    let r = try runForage(["run", "--config", config, "--store", store])
    #expect(r.status == 2)
    #expect(r.stderr.contains("cannot open the store \(store): its folder \(dir.file("no-such-folder")) does not exist"))
    #expect(!r.stderr.contains("sqlite3_"))
    #expect(!r.stderr.contains("code 14"))
  }

  @Test func test_issue8_foreignDatabase_isRefused() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", #"{"sources": [{"name": "a", "url": "http://127.0.0.1:9/"}]}"#)
    let store = dir.file("other.sqlite")
    do {
      let db = try SQLiteConnection(path: store)
      try db.exec("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
    }
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    let r = try runForage(["run", "--config", config, "--store", store])
    #expect(r.status == 2)
    #expect(r.stderr.contains("\(store) is a SQLite database of another program (tables: notes); Forage will not add its tables to it. Use a new path."))
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
  }

  @Test func test_issue15_query_unknownCharset_exit2_namesTheClosestLabel() throws {
    let dir = TemporaryDirectory()
    let page = try dir.write("p.html", "<p>hi</p>")
    let r = try runForage(["query", page, "p", "--charset", "shift-jsi"])
    #expect(r.status == 2)
    #expect(r.stderr.contains(#"unknown charset "shift-jsi" (did you mean "shift-jis"?)"#))
    #expect(r.stdout.isEmpty)
  }

  /// A file past what is read whole is refused by its size, before it is
  /// read (a sparse file: nothing is written to the disk).
  @Test func test_query_fileOverOneGiB_exit2_sayingItsSize() throws {
    let dir = TemporaryDirectory()
    let path = dir.file("huge.html")
    #expect(FileManager.default.createFile(atPath: path, contents: Data("<p>hi</p>".utf8)))
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.truncate(atOffset: UInt64(1 << 30) + 1)
    try handle.close()
    let r = try runForage(["query", path, "p", "--count"])
    #expect(r.status == 2)
    #expect(r.stderr.contains("\(path) is larger than 1 GiB, the most a page may be (it is read whole to be parsed)"), "\(r.stderr)")
    #expect(r.stdout.isEmpty)
  }

  @Test func test_issue8_query_charset_decodesTheInput() throws {
    let dir = TemporaryDirectory()
    // UTF-16LE without a byte order mark: only --charset can say so.
    let utf16 = dir.file("u16.html")
    try Data("<p>héllo</p>".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: URL(fileURLWithPath: utf16))
    #expect(try runForage(["query", utf16, "p", "--text", "--charset", "utf-16le"]).stdout == "héllo\n")
    // Valid UTF-8 bytes that are Latin-1 text: --charset wins over the bytes and the <meta>.
    let latin = try dir.write("l.html", #"<meta charset="utf-8"><p>été</p>"#)
    #expect(try runForage(["query", latin, "p", "--text"]).stdout == "été\n")
    #expect(try runForage(["query", latin, "p", "--text", "--charset", "latin1"]).stdout == "Ã©tÃ©\n")
  }

  @Test func test_issue8_query_charset_decodesAURLWhoseServerNamesNoCharset() throws {
    let body = "<p>héllo</p>".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    let server = try TestServer(routes: [
      "/u16": .fixed(TestResponse(headers: [("Content-Type", "text/html")], body: body))
    ])
    defer { server.stop() }
    let r = try runForage(["query", server.url("/u16"), "p", "--text", "--charset", "UTF-16LE"])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stdout == "héllo\n")
  }

  @Test func test_queryHelp_listsCharset() throws {
    let r = try runForage(["query", "--help"])
    #expect(r.stdout.contains("[--charset NAME]"))
    #expect(r.stdout.contains("\n  --charset NAME  Decode the page as NAME"))
  }

  @Test func test_query_fileWithTextAttrCountJSON() throws {
    let dir = TemporaryDirectory()
    let page = try dir.write("p.html", "<ul><li><a href=/a>One</a><li><a href=/b>Two &amp; more</a></ul>")
    #expect(try runForage(["query", page, "li a", "--count"]).stdout == "2\n")
    #expect(try runForage(["query", page, "li a", "--text"]).stdout == "One\nTwo & more\n")
    #expect(try runForage(["query", page, "a", "--attr", "href"]).stdout == "/a\n/b\n")
    #expect(try runForage(["query", page, "a", "--attr=href"]).stdout == "/a\n/b\n")
    #expect(try runForage(["query", page, "li:first-child a"]).stdout == "<a href=\"/a\">One</a>\n")
    let json = try runForage(["query", page, "a", "--text", "--json"])
    #expect(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String] == ["One", "Two & more"])
    let bad = try runForage(["query", page, "a[href"])
    #expect(bad.status == 2)
    #expect(bad.stderr.contains("character"))
  }
}
