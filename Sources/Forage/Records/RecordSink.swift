import Foundation
import ForageStore

/// The app's own persistence (Core Data, SwiftData, a file), fed every change
/// of the store in order by ``Engine/deliver(to:as:source:batchSize:until:stop:)``.
///
///     struct ProductSink: RecordSink {
///       func apply(_ changes: [RecordChange]) async throws {
///         for change in changes {
///           let (_, after) = try change.decode(Product.self)
///           try await database.upsert(key: change.key, after, lastChange: change.id)
///         }
///       }
///     }
///     let report = try await engine.deliver(to: ProductSink(), as: "coredata")
///
/// Delivery is at least once: the sink's cursor moves only after `apply`
/// returns, so a process killed (or an `apply` that throws) in between is
/// given the same batch again by the next delivery. Each change's `id` is
/// stable and increasing: a sink that keeps the last id it applied can skip
/// what it already has, and applying a change twice should do no harm (an
/// upsert by `key`, a delete of what is gone).
public protocol RecordSink: Sendable {
  /// Applies `changes`, oldest first, to the app's persistence; returns once
  /// they are durable there (saved), or throws to have them delivered again.
  func apply(_ changes: [RecordChange]) async throws
}

/// What one ``Engine/deliver(to:as:source:batchSize:until:stop:)`` did.
public struct SinkDelivery: Sendable, Hashable, CustomStringConvertible {
  /// The sink's name (whose cursor moved).
  public var sink: String
  /// Changes applied (the sink's `apply` returned for them).
  public var delivered: Int
  /// `apply` calls that returned.
  public var batches: Int
  /// The id of the last change the sink has applied (its cursor), 0 when none.
  public var cursor: Int64
  /// True when every kept change was delivered; false when the deadline
  /// or a stop request ended delivery first (the rest goes next time).
  public var caughtUp: Bool

  /// A report; each parameter has its property's meaning.
  public init(sink: String, delivered: Int, batches: Int, cursor: Int64, caughtUp: Bool) {
    self.sink = sink
    self.delivered = delivered
    self.batches = batches
    self.cursor = cursor
    self.caughtUp = caughtUp
  }

  /// `sink "coredata": 120 changes in 1 batch, up to change 4410`.
  public var description: String {
    let changes = delivered == 1 ? "1 change" : "\(delivered) changes"
    let batchWord = batches == 1 ? "batch" : "batches"
    let rest = caughtUp ? "" : " (stopped before the last change; the rest goes next time)"
    return "sink \"\(sink)\": \(changes) in \(batches) \(batchWord), up to change \(cursor)\(rest)"
  }
}
