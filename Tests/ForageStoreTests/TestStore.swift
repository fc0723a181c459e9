import Foundation
@testable import ForageStore

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
