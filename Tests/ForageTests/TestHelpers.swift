import Foundation
import Forage
import ForageStore

/// A temporary folder removed when the value is released.
final class TemporaryDirectory: Sendable {
  let path: String

  init() {
    path = NSTemporaryDirectory() + "forage-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  func file(_ name: String) -> String { path + "/" + name }

  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Every stored record of a store, as (key, fields JSON), sorted by key.
func allRecords(_ store: any Store, source: String? = nil) async throws -> [StoredRecord] {
  var out: [StoredRecord] = []
  var after: Int64 = 0
  while true {
    let batch = try await store.records(source: source, afterID: after, limit: 500)
    out += batch
    guard let last = batch.last else { break }
    after = last.id
  }
  return out.sorted { $0.key < $1.key }
}
