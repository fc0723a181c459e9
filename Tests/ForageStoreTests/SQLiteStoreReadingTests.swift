#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Testing
@testable import ForageStore

/// Issue 25: a store opened to read (`SQLiteStore(readingAt:)`, what status,
/// changes, export, report and download --list open) is never created,
/// migrated or written, and leaves no `-wal` or `-shm` beside a read-only
/// store; and the rule for names no written file may take.
@Suite(.serialized) struct SQLiteStoreReadingTests {
  /// A folder of its own, removed afterwards.
  final class Folder {
    let path: String
    init() throws {
      path = FileManager.default.temporaryDirectory.appendingPathComponent("forage-reading-\(UUID().uuidString)").path
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) -> String { path + "/" + name }
    var listing: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    deinit {
      chmod(path, 0o755)
      try? FileManager.default.removeItem(atPath: path)
    }
  }

  /// A closed store at `path` with records "a" and "b".
  func makeStore(_ path: String) async throws {
    let store = try SQLiteStore(path: path)
    try await commitRecords(store, ["a", "b"])
    try await store.close()
  }

  func commitRecords(_ store: SQLiteStore, _ keys: [String], source: String = "s") async throws {
    let crawl = try await store.openCrawl(source: source, seeds: [seed(keys.count)], now: t0)
    let item = try #require(try await store.claim(crawl: crawl.id, limit: 1, lease: Lease(owner: "o", for: .seconds(60), at: t0)).first)
    _ = try await store.commit([
      PageCommit(
        item: item, outcome: .done,
        records: keys.enumerated().map { record($1, source: source, fields: #"{"k":"\#($1)"}"#, hash: UInt64($0 + 1)) },
        now: t0)
    ])
  }

  func keys(_ store: SQLiteStore) async throws -> [String] {
    try await store.records(source: nil, afterID: 0, limit: 100).map(\.key).sorted()
  }

  @Test func test_issue25_anEmptyFile_isNotAStore_andStaysEmpty() throws {
    let folder = try Folder()
    let path = folder.file("empty.sqlite")
    _ = FileManager.default.createFile(atPath: path, contents: Data())
    let error = try #require(throws: StoreError.self) { try SQLiteStore(readingAt: path) }
    #expect(error.kind == .notAStore)
    #expect(error.description.hasPrefix("\(path) is not a Forage store: the file is empty"))
    #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
    #expect(folder.listing == ["empty.sqlite"])
  }

  @Test func test_issue25_aMissingFileOrAnEmptyDatabase_isNotAStore_andNothingIsCreated() throws {
    let folder = try Folder()
    let missing = try #require(throws: StoreError.self) { try SQLiteStore(readingAt: folder.file("none.sqlite")) }
    #expect(missing.kind == .notAStore)
    let db = try SQLiteConnection(path: folder.file("blank.sqlite"))
    try db.exec("PRAGMA user_version = 1")  // a database with a header and no tables
    try db.close()
    let blank = try #require(throws: StoreError.self) { try SQLiteStore(readingAt: folder.file("blank.sqlite")) }
    #expect(blank.kind == .notAStore)
    #expect(blank.description.contains("an empty SQLite database"))
    #expect(folder.listing == ["blank.sqlite"])
  }

  @Test func test_issue25_anOlderStore_isRefusedWithTheCommandsThatUpgradeIt_andNotMigrated() async throws {
    let folder = try Folder()
    let path = folder.file("old.sqlite")
    try await makeStore(path)
    let last = try #require(Migrator.forage.migrations.last?.name)
    let db = try SQLiteConnection(path: path)
    try db.exec("DELETE FROM forage_migrations WHERE name = '\(last)'")
    try db.close()
    let error = try #require(throws: StoreError.self) { try SQLiteStore(readingAt: path) }
    #expect(error.kind == .olderStore)
    #expect(error.description.contains("older Forage") && error.description.contains(last))
    #expect(error.description.contains("forage run, daemon or download"))
    let check = try SQLiteConnection(path: path)
    #expect(try Migrator.forage.appliedNames(check).contains(last) == false)
  }

  @Test func test_issue25_aWritableStore_readsButRefusesWrites_andLeavesNoWALOrSHM() async throws {
    let folder = try Folder()
    let path = folder.file("s.sqlite")
    try await makeStore(path)
    let store = try SQLiteStore(readingAt: path)
    #expect(store.isReadOnly)
    #expect(try await keys(store) == ["a", "b"])
    await #expect(throws: StoreError.self) { try await self.commitRecords(store, ["c"], source: "t") }
    try await store.close()
    #expect(folder.listing == ["s.sqlite"])
  }

  @Test func test_issue25_aReadOnlyFile_isOpenedReadOnly_andNoWALOrSHMAppears() async throws {
    let folder = try Folder()
    let path = folder.file("s.sqlite")
    try await makeStore(path)
    let bytes = try #require(FileManager.default.contents(atPath: path))
    chmod(path, 0o444)  // read-only by its mode, even to root
    let store = try SQLiteStore(readingAt: path)
    #expect(try await keys(store) == ["a", "b"])
    #expect(folder.listing == ["s.sqlite"], "while open")
    await #expect(throws: StoreError.self) { try await self.commitRecords(store, ["c"], source: "t") }
    try await store.close()
    #expect(folder.listing == ["s.sqlite"])
    #expect(FileManager.default.contents(atPath: path) == bytes)
  }

  @Test func test_issue25_aReadOnlyFile_whoseWriterIsOpen_readsTheWritersCommits() async throws {
    let folder = try Folder()
    let path = folder.file("s.sqlite")
    try await makeStore(path)
    let writer = try SQLiteStore(path: path)
    try await commitRecords(writer, ["c"], source: "t")  // in the WAL, not yet in the file
    #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    chmod(path, 0o444)
    defer { chmod(path, 0o644) }
    let reader = try SQLiteStore(readingAt: path)
    #expect(try await keys(reader) == ["a", "b", "c"])
    try await reader.close()
    try await writer.close()
  }

  @Test func test_issue25_anEmptyPath_isRefused_notATemporaryStore() throws {
    for open in [{ try SQLiteStore(path: "") }, { try SQLiteStore(readingAt: "") }] {
      let error = try #require(throws: StoreError.self) { _ = try open() }
      #expect(error.description.contains("the path is empty"))
    }
  }

  @Test func test_issue25_fileURI_escapesWhatAURIWouldRead() {
    #expect(SQLiteConnection.fileURI("/a b/c?d#e%f.sqlite") == "file:///a b/c%3fd%23e%25f.sqlite")
    #expect(SQLiteConnection.fileURI("rel/x.sqlite") == "file:rel/x.sqlite")
  }

  @Test func test_issue25_aReadOnlyStoreWithAQuestionMarkInItsName_opensAsImmutable() async throws {
    let folder = try Folder()
    let path = folder.file("what?#%.sqlite")
    try await makeStore(path)
    chmod(path, 0o444)
    let store = try SQLiteStore(readingAt: path)
    #expect(try await keys(store) == ["a", "b"])
    try await store.close()
    #expect(folder.listing == ["what?#%.sqlite"])
  }

  // MARK: SQLiteSideFiles

  @Test func test_issue25_sideFileNames_areReservedInEveryFolder() {
    let side = SQLiteSideFiles.sideFile(named: "forage.sqlite-journal")
    #expect(side?.database == "forage.sqlite" && side?.role == "rollback journal")
    #expect(SQLiteSideFiles.sideFile(named: "data.db-wal")?.role == "write-ahead log")
    #expect(SQLiteSideFiles.sideFile(named: "x-shm")?.role == "shared-memory index")
    #expect(SQLiteSideFiles.sideFile(named: "Forage.SQLITE-WAL")?.database == "Forage.SQLITE")
    #expect(SQLiteSideFiles.sideFile(named: "forage.sqlite-mj1A2B3C9D4")?.role == "super-journal")
    for ordinary in ["forage.sqlite", "-wal", "journal", "notes-journal.txt", "a-walk", "x-mj1A2B3C8D4", "report.html"] {
      #expect(!SQLiteSideFiles.isReserved(name: ordinary), "\(ordinary)")
    }
  }

  @Test func test_issue25_reservation_ofTheStore_itsCompanion_andAnyDatabase() async throws {
    let folder = try Folder()
    let store = folder.file("forage.sqlite")
    // The store's path is reserved before the store exists, under any spelling.
    #expect(SQLiteSideFiles.reservation(ofPath: folder.path + "/./forage.sqlite", store: store) == .store)
    #expect(SQLiteSideFiles.reservation(ofPath: store + ".pending.json", store: store) == .storeCompanion)
    #expect(SQLiteSideFiles.reservation(ofPath: folder.file("other.txt"), store: store) == nil)
    #expect(SQLiteSideFiles.reservation(ofPath: store, store: "postgres://db/forage") == nil)
    try await makeStore(folder.file("other.db"))
    #expect(SQLiteSideFiles.reservation(ofPath: folder.file("other.db"), store: store) == .database)
    #expect(SQLiteSideFiles.reservation(ofPath: folder.file("new.sqlite-wal"), store: nil)
      == .sideFile(database: "new.sqlite", role: "write-ahead log"))
    _ = FileManager.default.createFile(atPath: folder.file("plain.db"), contents: Data("not sqlite".utf8))
    #expect(SQLiteSideFiles.reservation(ofPath: folder.file("plain.db"), store: nil) == nil)
  }
}
