import Foundation
import ForageStore

/// What ``Engine/records(_:source:undecodable:)`` does with a record whose
/// fields do not decode as the type asked for.
public enum UndecodableRecords: Sendable, Hashable {
  /// Leaves it out; the others are returned (the default: one bad record
  /// does not hide a source). ``Engine/decodedRecords(_:source:)`` lists
  /// what was left out.
  case skip
  /// Throws its ``RecordDecodingError``: all the records or none.
  case fail
}

/// The current records of a source decoded as `Value`, and those that did
/// not decode (``Engine/decodedRecords(_:source:)``).
public struct DecodedRecords<Value> {
  /// The records that decoded, in the order the store added them.
  public var records: [Stored<Value>]
  /// One error for each record that did not, naming its key and field.
  public var failures: [RecordDecodingError]
}

extension DecodedRecords: Sendable where Value: Sendable {}

extension Engine {
  /// The current (not removed) records of `source`, decoded as `type` from
  /// their fields, in the order the store added them.
  ///
  ///     struct Product: Decodable, Sendable { let title: String; let price: Double?; let sku: String }
  ///     let products: [Stored<Product>] = try await engine.records(Product.self, source: "catalog")
  ///     print(products[0].value.title, products[0].key, products[0].lastSeen)
  ///
  /// Fields decode as ``RecordDecoder`` says: numbers, strings, booleans,
  /// arrays and nested objects as themselves, ISO 8601 text as `Date`, and a
  /// missing field as nil for an optional property. The store is read in
  /// pages of ``RecordDefaults/readPage`` records.
  ///
  /// - Parameter undecodable: what a record that does not decode does:
  ///   left out (``UndecodableRecords/skip``, the default; see
  ///   ``decodedRecords(_:source:)`` for the list), or thrown
  ///   (``UndecodableRecords/fail``).
  /// - Throws: `EngineError.unknownSource` when neither the config nor the
  ///   store knows `source` (with the closest name); with `.fail`, the
  ///   ``RecordDecodingError`` of the first record that does not decode;
  ///   store errors.
  public func records<T: Decodable>(
    _ type: T.Type, source: String, undecodable: UndecodableRecords = .skip
  ) async throws -> [Stored<T>] {
    let decoded = try await decodeRecords(type, source: source, stopAtFailure: undecodable == .fail)
    if undecodable == .fail, let failure = decoded.failures.first { throw failure }
    return decoded.records
  }

  /// The current records of `source` decoded as `type`, with an error for
  /// each one that does not decode (naming its key and field) beside those that do.
  ///
  ///     let result = try await engine.decodedRecords(Product.self, source: "catalog")
  ///     for failure in result.failures { log(failure.description) }
  ///     show(result.records)
  ///
  /// - Throws: `EngineError.unknownSource` for a source neither the config
  ///   nor the store knows; store errors.
  public func decodedRecords<T: Decodable>(_ type: T.Type, source: String) async throws -> DecodedRecords<T> {
    try await decodeRecords(type, source: source, stopAtFailure: false)
  }

  private func decodeRecords<T: Decodable>(_ type: T.Type, source: String, stopAtFailure: Bool) async throws
    -> DecodedRecords<T>
  {
    try await checkRecordSource(source)
    let decoder = RecordDecoder()
    var result = DecodedRecords<T>(records: [], failures: [])
    var after: Int64 = 0
    while true {
      let page = try await store.records(source: source, afterID: after, limit: RecordDefaults.readPage)
      guard let last = page.last else { break }
      after = last.id
      for record in page where record.removedAt == nil {
        do {
          result.records.append(Stored(try decoder.decode(type, from: record.fieldsJSON), of: record))
        } catch {
          result.failures.append(RecordDecodingError(source: source, key: record.key, error))
          if stopAtFailure { return result }
        }
      }
      if page.count < RecordDefaults.readPage { break }
    }
    return result
  }

  /// Throws unless the config or the store knows `source`: a source of the
  /// config not crawled yet has no records, and one the store holds but the
  /// config dropped still has its records.
  func checkRecordSource(_ source: String) async throws {
    if config.sources.contains(where: { $0.name == source }) { return }
    let stored = try await store.sourceNames()
    if stored.contains(source) { return }
    let known = Array(Set(stored + config.sources.map(\.name))).sorted()
    let hint = Spelling.hint(for: source, in: known)
    let list = known.isEmpty ? "there are no sources yet" : "the sources are \(known.joined(separator: ", "))"
    throw EngineError(.unknownSource, "no source is named \"\(source)\"\(hint); \(list)")
  }
}
