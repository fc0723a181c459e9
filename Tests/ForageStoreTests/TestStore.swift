import Foundation
import Testing
@testable import ForageStore
#if Postgres
@testable import ForagePostgres
#endif

/// A temporary store file per test, removed (with its WAL files) afterwards.
struct TempStorePath: ~Copyable {
  let path: String

  init() {
    path = FileManager.default.temporaryDirectory
      .appendingPathComponent("forage-store-\(UUID().uuidString).sqlite").path
  }

  deinit {
    for suffix in ["", "-wal", "-shm", "-journal"] {
      try? FileManager.default.removeItem(atPath: path + suffix)
    }
  }
}

/// Runs `body` with a fresh store on a temporary file.
@discardableResult
func withStore<T>(_ body: (SQLiteStore, String) async throws -> T) async throws -> T {
  let temp = TempStorePath()
  let store = try SQLiteStore(path: temp.path)
  return try await body(store, temp.path)
}

/// A fixed instant; whole and half seconds from it are exact in binary, so
/// dates read back compare equal to the dates written.
let t0 = Date(timeIntervalSince1970: 1_700_000_000)

func seed(_ n: Int, depth: Int = 0) -> FrontierSeed {
  FrontierSeed(url: "https://example.com/\(n)", fingerprint: UInt64(n) &* 0x9E37_79B9_7F4A_7C15,
               depth: depth)
}

func record(_ key: String, source: String = "s", fields: String, hash: UInt64) -> RecordInput {
  RecordInput(source: source, key: key, url: "https://example.com/\(key)", fieldsJSON: fields,
              contentHash: hash)
}

/// The stores a guarantee is checked on: SQLite always; PostgreSQL when
/// `FORAGE_TEST_POSTGRES_URL` names a server (`scripts/test` starts one), or
/// under CI, where a missing server fails the test instead of skipping it.
enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
  case sqlite, postgres

  static var all: [StoreKind] {
    #if Postgres
    return PostgresTestServer.url != nil || PostgresTestServer.isCI ? [.sqlite, .postgres] : [.sqlite]
    #else
    return [.sqlite]
    #endif
  }

  var description: String { rawValue }
}

/// Runs `body` with a fresh, empty store of `kind`: a temporary SQLite file,
/// or a new database on the test PostgreSQL server (dropped afterwards).
@discardableResult
func withStore<T>(_ kind: StoreKind, _ body: (any Store) async throws -> T) async throws -> T {
  switch kind {
  case .sqlite:
    let temp = TempStorePath()
    let store = try SQLiteStore(path: temp.path)
    return try await body(store)
  case .postgres:
    #if Postgres
    return try await PostgresTestServer.withDatabase { url in
      // The shared tests run on a virtual clock (t0): leases follow it, as on SQLite.
      let store = try PostgresStore(url: url, leaseClock: .caller)
      do {
        let value = try await body(store)
        try await store.close()
        return value
      } catch {
        try? await store.close()
        throw error
      }
    }
    #else
    throw PostgresTestServer.Missing()
    #endif
  }
}

/// The crawl's frontier counter (`crawls.frontier_size`), which caps its growth.
func frontierSize(_ store: any Store, crawl: Int64) async throws -> Int {
  if let sqlite = store as? SQLiteStore { return try await sqlite.frontierSize(crawl: crawl) }
  #if Postgres
  if let postgres = store as? PostgresStore { return try await postgres.frontierSize(crawl: crawl) }
  #endif
  Issue.record("no frontier counter for \(type(of: store))")
  return -1
}
