import Foundation
import ForageStore

/// A record of the store decoded as the app's own type, with what the store
/// knows of it: where it came from and when it was seen.
///
///     struct Product: Decodable, Sendable { let title: String; let price: Double?; let sku: String }
///     let products: [Stored<Product>] = try await engine.records(Product.self, source: "catalog")
///     products[0].value.title; products[0].key; products[0].url; products[0].lastSeen
///
/// `id` is the record's identifier in the store (stable for the record's
/// life: a changed record keeps it), so `Stored` is `Identifiable` for lists.
public struct Stored<Value> {
  /// The record's fields, decoded.
  public var value: Value
  /// The record's identifier in the store.
  public var id: Int64
  /// The name of the source it belongs to.
  public var source: String
  /// Its identity within the source (the config's `key` fields).
  public var key: String
  /// The page it was last seen on.
  public var url: String
  /// When it was first stored.
  public var firstSeen: Date
  /// When a page last gave it.
  public var lastSeen: Date

  /// A decoded record; each parameter has its property's meaning.
  public init(value: Value, id: Int64, source: String, key: String, url: String, firstSeen: Date, lastSeen: Date) {
    self.value = value
    self.id = id
    self.source = source
    self.key = key
    self.url = url
    self.firstSeen = firstSeen
    self.lastSeen = lastSeen
  }

  /// `record`'s place and dates around a `value` decoded from its fields.
  public init(_ value: Value, of record: StoredRecord) {
    self.init(
      value: value, id: record.id, source: record.source, key: record.key, url: record.url,
      firstSeen: record.firstSeen, lastSeen: record.lastSeen)
  }
}

extension Stored: Identifiable {}
extension Stored: Sendable where Value: Sendable {}
extension Stored: Equatable where Value: Equatable {}
extension Stored: Hashable where Value: Hashable {}
