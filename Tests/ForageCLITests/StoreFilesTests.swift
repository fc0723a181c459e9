#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
import ForageStore
import ForageTestSupport

/// Issue 25: nothing a command writes lands where SQLite reads it as part of a
/// store, an empty --store is refused, and commands that only read change no
/// store and leave nothing beside it.
@Suite(.serialized) struct StoreFilesTests {
  /// A store at `dir/name` with two records, closed (one complete file).
  static func storeWithRecords(_ dir: TemporaryDirectory, _ name: String = "forage.sqlite") async throws -> String {
    try await SafetyTests.storeWithRecords(dir, name)
  }

  /// A hot rollback journal for the database at `path`: one record that puts
  /// a page of `fill` bytes over its page 2 (the journal format of
  /// <https://www.sqlite.org/fileformat.html#the_rollback_journal>). Played
  /// back, it breaks the database's b-tree.
  static func hotJournal(for path: String, fill: UInt8 = 0x41) throws -> [UInt8] {
    let bytes = try #require(FileManager.default.contents(atPath: path))
    let field = Int(bytes[16]) << 8 | Int(bytes[17])
    let pageSize = field == 1 ? 65536 : field
    let pages = bytes.count / pageSize
    func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
    var journal: [UInt8] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7]
    journal += be32(1) + be32(0) + be32(pages) + be32(512) + be32(pageSize)  // records, nonce, pages, sector, page size
    journal += [UInt8](repeating: 0, count: 512 - journal.count)
    // The checksum: the nonce plus every 200th byte from the end of the page.
    let checksum = Array(stride(from: pageSize - 200, through: 0, by: -200)).count * Int(fill)
    journal += be32(2) + [UInt8](repeating: fill, count: pageSize) + be32(checksum)
    return journal
  }

  static func listing(_ path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// Runs `forage` as a user who may not write `dir` (nobody, when the tests
  /// run as root; else this user with `dir` made read-only until `body` ends).
  static func withReadOnlyFolder<T>(_ dir: TemporaryDirectory, _ body: ([String]) throws -> T) throws -> T {
    if getuid() == 0 { return try body(["/usr/sbin/runuser", "-u", "nobody", "--"]) }
    chmod(dir.path, 0o555)
    defer { chmod(dir.path, 0o755) }
    return try body([])
  }

  @Test func test_issue25_aDownloadNamedAsTheStoresJournal_landsUnderAnotherName_andTheStoreStaysIntact() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let before = try await storeContents(SQLiteStore(path: store))
    let journal = try Self.hotJournal(for: store)
    let server = try TestServer(routes: [
      "/file": Route { _ in
        TestResponse(headers: [("Content-Disposition", #"attachment; filename="forage.sqlite-journal""#)], body: journal)
      }
    ])
    defer { server.stop() }

    // The issue's command: the default store, in the folder the file lands in.
    let result = try runForage(["download", server.url("/file"), "--to", "."], in: dir.path)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasSuffix("/forage.sqlite-journal.download\n"), "\(result.stdout)")
    #expect(result.stderr.contains("saved as forage.sqlite-journal.download"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: dir.file("forage.sqlite-journal")))
    #expect(FileManager.default.contents(atPath: dir.file("forage.sqlite-journal.download")) == Data(journal))

    // The next commands open the store: nothing is played back into it.
    let status = try runForage(["status", "--store", "forage.sqlite"], in: dir.path)
    #expect(status.status == 0, "\(status.stderr)")
    let list = try runForage(["download", "--list"], in: dir.path)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout.contains("forage.sqlite-journal.download"), "\(list.stdout)")
    #expect(list.stdout.contains("saved as forage.sqlite-journal.download: SQLite would take"), "\(list.stdout)")
    let opened = try SQLiteStore(path: store)
    #expect(try await opened.integrityProblems() == [])
    #expect(try await storeContents(opened) == before)
    try await opened.close()
  }

  @Test func test_issue25_anOrdinaryFileNamedAsAJournal_isNotDeletedByTheNextOpen() async throws {
    let dir = TemporaryDirectory()
    _ = try await Self.storeWithRecords(dir)
    let body = Array("my notes\n".utf8)
    let server = try TestServer(routes: [
      "/notes": Route { _ in
        TestResponse(headers: [("Content-Disposition", #"attachment; filename="forage.sqlite-journal""#)], body: body)
      }
    ])
    defer { server.stop() }
    let result = try runForage(["download", server.url("/notes"), "--to", "."], in: dir.path)
    #expect(result.status == 0, "\(result.stderr)")
    let landed = String(result.stdout.dropLast())
    for command in [["status", "--store", "forage.sqlite"], ["download", "--list"], ["export", "--store", "forage.sqlite"]] {
      _ = try runForage(command, in: dir.path)
      #expect(FileManager.default.contents(atPath: landed) == Data(body), "after forage \(command[0]): \(landed)")
    }
    let list = try runForage(["download", "--list"], in: dir.path)
    #expect(list.stdout.contains("done"), "\(list.stdout)")
  }

  @Test func test_issue25_exportAndReport_neverWriteASideFileOrADatabase() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let other = try await Self.storeWithRecords(dir, "other.db")
    let otherBytes = try #require(FileManager.default.contents(atPath: other))
    for out in ["forage.sqlite-wal", "forage.sqlite-journal", "other.db-shm", "later.sqlite-WAL", "forage.sqlite.pending.json"] {
      let export = try runForage(["export", "--store", "forage.sqlite", "--out", out], in: dir.path)
      #expect(export.status == 2, "export --out \(out): \(export.stderr)")
      #expect(export.stderr.contains("cannot write \(out)"), "\(export.stderr)")
      let report = try runForage(["report", "--store", store, "--out", dir.file(out)])
      #expect(report.status == 2, "report --out \(out): \(report.stderr)")
    }
    let export = try runForage(["export", "--store", "forage.sqlite", "--out", "other.db"], in: dir.path)
    #expect(export.status == 2, "\(export.stderr)")
    #expect(export.stderr.contains("is a SQLite database"), "\(export.stderr)")
    #expect(FileManager.default.contents(atPath: other) == otherBytes)
    #expect(Self.listing(dir.path) == ["forage.sqlite", "other.db"])
  }

  @Test func test_issue25_commandsThatOnlyRead_neverTurnAFileIntoAStore() throws {
    let dir = TemporaryDirectory()
    let empty = try dir.write("empty.sqlite", "")
    let commands: [[String]] = [
      ["status", "--store", empty], ["changes", "--store", empty], ["export", "--store", empty],
      ["report", "--store", empty, "--out", dir.file("r.html")], ["download", "--list", "--store", empty],
    ]
    for command in commands {
      let result = try runForage(command)
      #expect(result.status == 2, "forage \(command[0]): \(result.stderr)")
      #expect(result.stderr.contains("is not a Forage store: the file is empty"), "forage \(command[0]): \(result.stderr)")
      #expect((try? FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int) == 0)
      #expect(Self.listing(dir.path) == ["empty.sqlite"], "forage \(command[0])")
    }
    // A missing store is not created either.
    let missing = try runForage(["status", "--store", dir.file("none.sqlite")])
    #expect(missing.status == 2)
    #expect(Self.listing(dir.path) == ["empty.sqlite"])
  }

  @Test func test_issue25_aReadOnlyStore_isReadWithoutLeavingAWALOrSHM() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let bytes = try #require(FileManager.default.contents(atPath: store))
    let reading: [[String]] = [
      ["status", "--store", store], ["changes", "--store", store], ["export", "--store", store],
      ["download", "--list", "--store", store],
    ]
    // In a folder this user cannot write.
    try Self.withReadOnlyFolder(dir) { launcher in
      for command in reading {
        let result = try runForage(command, launcher: launcher)
        #expect(result.status == 0, "forage \(command[0]): \(result.stderr)")
        #expect(Self.listing(dir.path) == ["forage.sqlite"], "forage \(command[0])")
      }
      let export = try runForage(["export", "--store", store], launcher: launcher)
      #expect(export.stdout.split(separator: "\n").count == 2)
    }
    // A file whose mode says read-only, in a writable folder (root may write it).
    chmod(store, 0o444)
    defer { chmod(store, 0o644) }
    for command in reading + [["report", "--store", store, "--out", dir.file("r.html")]] {
      let result = try runForage(command)
      #expect(result.status == 0, "forage \(command[0]): \(result.stderr)")
      #expect(Self.listing(dir.path).filter { $0 != "r.html" } == ["forage.sqlite"], "forage \(command[0])")
    }
    #expect(FileManager.default.contents(atPath: store) == bytes)
  }

  @Test func test_issue25_messagesAboutPathsAreSentencesWithTheRightStatus() async throws {
    let dir = TemporaryDirectory()
    let store = try await Self.storeWithRecords(dir)
    let folderConfig = try runForage(["run", "--config", dir.path])
    #expect(folderConfig.status == 2)
    #expect(folderConfig.stderr.contains("it is a folder; name the config file"), "\(folderConfig.stderr)")
    let emptyInit = try runForage(["init", ""])
    #expect(emptyInit.status == 2)
    #expect(emptyInit.stderr.contains("the DIR argument is empty: name a folder"), "\(emptyInit.stderr)")
    for command in ["run", "daemon", "download", "status", "export"] {
      var arguments = [command, "--store", ""]
      if command == "download" { arguments += ["https://example.com/a", "--to", dir.path] }
      let result = try runForage(arguments, in: dir.path)
      #expect(result.status == 2, "forage \(command): \(result.stderr)")
      #expect(result.stderr.contains("--store was given an empty PATH"), "forage \(command): \(result.stderr)")
    }
    try Self.withReadOnlyFolder(dir) { launcher in
      let initInto = try runForage(["init", dir.file("new")], launcher: launcher)
      #expect(initInto.status == 2)
      #expect(initInto.stderr.contains("forage init: cannot create the folder"), "\(initInto.stderr)")
      #expect(!initInto.stderr.contains("operation could not be completed"), "\(initInto.stderr)")
      let report = try runForage(["report", "--store", store, "--out", dir.file("r.html")], launcher: launcher)
      #expect(report.status == 2, "\(report.stderr)")
      #expect(report.stderr.contains("cannot create a file in \(dir.path): the folder is not writable"), "\(report.stderr)")
      let export = try runForage(["export", "--store", store, "--out", dir.file("r.jsonl")], launcher: launcher)
      #expect(export.status == 2, "\(export.stderr)")
    }
    #expect(Self.listing(dir.path) == ["forage.sqlite"])
  }
}
