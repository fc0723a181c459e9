// The example app's own persistence: Forage's changes applied to SwiftData.
//
// Not compiled here (no Apple SDK on the CI machines; Examples/ is outside
// Sources/). Each SwiftData API below was checked against Apple's
// documentation pages for SwiftData (iOS 17+): the `Model()` and
// `ModelActor()` macros, the `Attribute` macro with
// `Schema.Attribute.Option.unique`, `ModelActor.modelContext`,
// `FetchDescriptor.init(predicate:sortBy:)` and `fetchLimit`,
// `ModelContext.fetch(_:)`, `insert(_:)`, `delete(_:)` and `save()`.
// docs/apple.md lists them.

import Foundation
import SwiftData
import Forage
import ForageStore

/// A product as the app keeps it, one per record of the catalog.
@Model
final class SavedProduct {
  /// `source/key`: a record's identity in Forage.
  @Attribute(.unique) var recordID: String
  var source: String
  var key: String
  var title: String
  var price: Double?
  var url: String
  /// The id of the last Forage change applied to it: a change delivered
  /// again (after a kill between `apply` and the cursor) is skipped.
  var lastChange: Int64

  init(recordID: String, source: String, key: String, title: String, price: Double?, url: String, lastChange: Int64) {
    self.recordID = recordID
    self.source = source
    self.key = key
    self.title = title
    self.price = price
    self.url = url
    self.lastChange = lastChange
  }
}

/// The fields of the example's sources (forage.json).
struct ProductFields: Decodable, Sendable {
  let title: String
  let price: Double?
}

/// Applies Forage's changes to SwiftData on a context of its own (a model
/// actor: SwiftData's contexts and models never leave it), saving once per
/// batch. Register it so every background launch feeds it, and deliver to it
/// when the app comes to the front:
///
///     let sink = ProductSink(modelContainer: container)
///     Engine.registerSink(sink, as: "swiftdata")
///     try await engine.deliver(to: sink, as: "swiftdata")
@ModelActor
actor ProductSink: RecordSink {
  func apply(_ changes: [RecordChange]) async throws {
    for change in changes {
      let recordID = change.source + "/" + change.key
      var descriptor = FetchDescriptor<SavedProduct>(predicate: #Predicate { $0.recordID == recordID })
      descriptor.fetchLimit = 1
      let existing = try modelContext.fetch(descriptor).first
      if let existing, existing.lastChange >= change.id { continue }  // applied before
      switch change.kind {
      case .removed:
        if let existing { modelContext.delete(existing) }
      case .new, .changed, .restored:
        // A record without a title (its page changed shape) is left out
        // rather than thrown: a throw would give this batch back forever.
        guard let fields = (try? change.decode(ProductFields.self))?.after else { continue }
        if let existing {
          existing.title = fields.title
          existing.price = fields.price
          existing.url = change.url
          existing.lastChange = change.id
        } else {
          modelContext.insert(
            SavedProduct(
              recordID: recordID, source: change.source, key: change.key, title: fields.title, price: fields.price,
              url: change.url, lastChange: change.id))
        }
      }
    }
    // Durable before `apply` returns: only then does Forage move the cursor.
    try modelContext.save()
  }
}
