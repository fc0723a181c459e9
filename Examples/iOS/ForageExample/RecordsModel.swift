import Foundation
import Observation
import Forage
import ForageBackgroundTasks
import ForageStore

/// What the screen shows: the records of the two sources, kept current by
/// Forage's `LiveRecords` (each follows its source's change stream, so a
/// background launch's new prices appear without a reload), and when the
/// data was last refreshed.
@MainActor @Observable
final class RecordsModel {
  /// The fixed-price item and the catalogue, decoded as `ProductFields`
  /// (ProductSink.swift); nil until the engine is attached.
  private(set) var prices: LiveRecords<ProductFields>?
  private(set) var catalog: LiveRecords<ProductFields>?
  var lastRefresh: Date?
  var problem: String?
  private var engine: Engine?

  /// Every record of both sources, for the list.
  var records: [Stored<ProductFields>] { (prices?.records ?? []) + (catalog?.records ?? []) }

  func attach(_ engine: Engine) {
    self.engine = engine
    prices = LiveRecords(ProductFields.self, source: "prices", engine: engine)
    catalog = LiveRecords(ProductFields.self, source: "catalog", engine: engine)
  }

  /// Follows both sources until the calling task ends (the view's `.task`).
  func follow() async {
    await refreshDate()
    await withTaskGroup(of: Void.self) { group in
      if let prices { group.addTask { await prices.follow() } }
      if let catalog { group.addTask { await catalog.follow() } }
    }
  }

  /// Pull to refresh: reads the records and the latest completed run again.
  func reload() async {
    await prices?.reload()
    await catalog?.reload()
    await refreshDate()
  }

  private func refreshDate() async {
    guard let store = engine?.store else { return }
    do {
      lastRefresh = try await store.runs(limit: 20).first { $0.summary?.outcome == .completed }?.startedAt
    } catch {
      problem = "\(error)"
    }
  }
}
