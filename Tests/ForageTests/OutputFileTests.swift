import Foundation
import Testing
@testable import Forage

/// The one rule for replacing a path a user named (issue 8): only a regular
/// file, never a folder, a device, a link to one, or the store itself.
@Suite struct OutputFileTests {
  @Test func test_newFile_isCreatedOnCommit_only() throws {
    let dir = TemporaryDirectory()
    let path = dir.file("out.jsonl")
    let writer = try OutputFile(path: path).open()
    try writer.write("one\n")
    #expect(!FileManager.default.fileExists(atPath: path))
    try writer.commit()
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "one\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.jsonl"])
  }

  @Test func test_regularFile_isReplaced_andAnAbandonedWriteKeepsIt() throws {
    let dir = TemporaryDirectory()
    let path = dir.file("out.csv")
    try "old".write(toFile: path, atomically: false, encoding: .utf8)
    do {
      let writer = try OutputFile(path: path).open()
      try writer.write("half")
      // Released without commit: the old file stays, the temporary goes.
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["out.csv"])
    let output = try OutputFile(path: path)
    #expect(output.replacesExistingFile)
    let writer = try output.open()
    try writer.write("new")
    try writer.commit()
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
  }

  @Test func test_folder_isRefused_andKeepsItsContents() throws {
    let dir = TemporaryDirectory()
    let folder = dir.file("keep")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    try "precious".write(toFile: folder + "/a.txt", atomically: false, encoding: .utf8)
    #expect(throws: OutputFileError.self) { try OutputFile(path: folder) }
    #expect(throws: OutputFileError.self) { try OutputFile(path: folder + "/") }
    #expect(try String(contentsOfFile: folder + "/a.txt", encoding: .utf8) == "precious")
  }

  @Test func test_device_andLinksToFoldersOrNowhere_areRefused() throws {
    let dir = TemporaryDirectory()
    #expect(throws: OutputFileError.self) { try OutputFile(path: "/dev/null") }
    let folderLink = dir.file("tmp-link")
    try FileManager.default.createSymbolicLink(atPath: folderLink, withDestinationPath: dir.path)
    #expect(throws: OutputFileError.self) { try OutputFile(path: folderLink) }
    let dangling = dir.file("dangling")
    try FileManager.default.createSymbolicLink(atPath: dangling, withDestinationPath: dir.file("nothing/here"))
    #expect(throws: OutputFileError.self) { try OutputFile(path: dangling) }
    #expect(throws: OutputFileError.self) { try OutputFile(path: dir.file("no-such-folder/out.jsonl")) }
    #expect(throws: OutputFileError.self) { try OutputFile(path: "") }
  }

  @Test func test_linkToARegularFile_replacesTheFile_andKeepsTheLink() throws {
    let dir = TemporaryDirectory()
    let real = dir.file("real.jsonl")
    try "old".write(toFile: real, atomically: false, encoding: .utf8)
    let link = dir.file("link.jsonl")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
    let writer = try OutputFile(path: link).open()
    try writer.write("new")
    try writer.commit()
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == real)
    #expect(try String(contentsOfFile: real, encoding: .utf8) == "new")
  }

  @Test func test_theStore_isRefused_underAnySpellingOrHardLink() throws {
    let dir = TemporaryDirectory()
    let store = dir.file("s.sqlite")
    try "store bytes".write(toFile: store, atomically: false, encoding: .utf8)
    let protecting = OutputFile.protectingStore(store)
    let hardLink = dir.file("h.sqlite")
    try FileManager.default.linkItem(atPath: store, toPath: hardLink)
    let symlink = dir.file("l.sqlite")
    try FileManager.default.createSymbolicLink(atPath: symlink, withDestinationPath: store)
    for spelling in [store, dir.path + "/./s.sqlite", dir.path + "//s.sqlite", hardLink, symlink] {
      #expect(throws: OutputFileError.self, "\(spelling)") { try OutputFile(path: spelling, protecting: protecting) }
    }
    // The store's WAL is the store too.
    try "wal".write(toFile: store + "-wal", atomically: false, encoding: .utf8)
    #expect(throws: OutputFileError.self) { try OutputFile(path: store + "-wal", protecting: protecting) }
    #expect(try String(contentsOfFile: store, encoding: .utf8) == "store bytes")
    // Another file in the same folder is fine.
    #expect(throws: Never.self) { try OutputFile(path: dir.file("out.jsonl"), protecting: protecting) }
  }

  /// Issue 25: `export --out forage.sqlite-wal` wrote a file the next open
  /// of forage.sqlite deleted (or replayed into the store).
  @Test func test_issue25_sideFileNames_databases_andTheStoresCompanion_areRefused() throws {
    let dir = TemporaryDirectory()
    let store = dir.file("forage.sqlite")
    let protecting = OutputFile.protectingStore(store)
    for name in ["forage.sqlite-wal", "forage.sqlite-shm", "forage.sqlite-journal", "elsewhere.db-wal", "X-JOURNAL"] {
      let error = try #require(throws: OutputFileError.self, "\(name)") {
        try OutputFile(path: dir.file(name), protecting: protecting)
      }
      #expect(error.reason.contains("the name SQLite gives the"), "\(error)")
    }
    // Through a link named innocently, too.
    let link = dir.file("out.jsonl")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.file("later.sqlite-wal"))
    try "old".write(toFile: dir.file("later.sqlite-wal"), atomically: false, encoding: .utf8)
    #expect(throws: OutputFileError.self) { try OutputFile(path: link, protecting: protecting) }
    // An earlier version's pending requests beside the store, existing or not.
    #expect(throws: OutputFileError.self) { try OutputFile(path: store + ".pending.json", protecting: protecting) }
    // Any SQLite database, the store or not.
    let database = dir.file("other.sqlite")
    try Data("SQLite format 3\0".utf8 + [UInt8](repeating: 0, count: 84)).write(to: URL(fileURLWithPath: database))
    let error = try #require(throws: OutputFileError.self) { try OutputFile(path: database, protecting: protecting) }
    #expect(error.reason.contains("is a SQLite database"))
    #expect(throws: Never.self) { try OutputFile(path: dir.file("forage.sqlite.jsonl"), protecting: protecting) }
  }

  @Test func test_newFile_getsAnOrdinaryMode_andAReplacedFileKeepsItsMode() throws {
    let dir = TemporaryDirectory()
    let path = dir.file("out")
    let writer = try OutputFile(path: path).open()
    try writer.commit()
    let mode = try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    #expect(mode & 0o600 == 0o600)
    try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: path)
    let again = try OutputFile(path: path).open()
    try again.commit()
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o640)
  }
}
