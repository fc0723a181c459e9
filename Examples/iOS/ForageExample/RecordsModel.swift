import Foundation
import Observation
import Forage
import ForageStore

/// What the screen shows: the stored records with their age, and when the
/// data was last refreshed.
@MainActor @Observable
final class RecordsModel {
  struct Row: Identifiable, Hashable {
    var id: Int64
    var title: String
    var source: String
    var lastSeen: Date
  }

  var rows: [Row] = []
  var lastRefresh: Date?
  var problem: String?
  private var engine: Engine?

  func attach(_ engine: Engine) {
    self.engine = engine
    Task { await reload() }
  }

  /// Reads the records and the latest completed run from the store.
  func reload() async {
    guard let store = engine?.store else { return }
    do {
      let records = try await store.records(source: nil, afterID: 0, limit: 500)
      rows = records.filter { $0.removedAt == nil }.map { record in
        let fields = (try? JSONSerialization.jsonObject(with: Data(record.fieldsJSON.utf8))) as? [String: Any]
        let title = (fields?["title"] as? String) ?? record.key
        return Row(id: record.id, title: title, source: record.source, lastSeen: record.lastSeen)
      }
      lastRefresh = try await store.runs(limit: 20).first { $0.summary?.outcome == .completed }?.startedAt
    } catch {
      problem = "\(error)"
    }
  }
}
