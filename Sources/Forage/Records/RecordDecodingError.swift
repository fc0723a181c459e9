import Foundation

/// A stored record whose fields do not decode as the type asked for: names
/// the source, the record's key and the field, and says what was wrong.
///
///     record "sku-7" of source "catalog" does not decode: field "price": expected a number, found a string
///
/// ``Engine/records(_:source:undecodable:)`` leaves such records out by
/// default (``Engine/decodedRecords(_:source:)`` lists them beside the
/// others); with ``UndecodableRecords/fail`` the first one is thrown.
public struct RecordDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The record's source.
  public var source: String
  /// The record's key within the source.
  public var key: String
  /// The field that does not decode, as a dotted path (`price`,
  /// `offers.0.price`); empty when the record as a whole does not.
  public var field: String
  /// What is wrong with it, for a person: `expected a number, found a string`.
  public var problem: String

  /// An error; each parameter has its property's meaning.
  public init(source: String, key: String, field: String, problem: String) {
    self.source = source
    self.key = key
    self.field = field
    self.problem = problem
  }

  /// The error of `record` of `source` for `error` thrown by a decoder.
  init(source: String, key: String, _ error: any Error) {
    guard let decoding = error as? DecodingError else {
      self.init(source: source, key: key, field: "", problem: "\(error)")
      return
    }
    func path(_ keys: [any CodingKey]) -> String { keys.map(\.stringValue).joined(separator: ".") }
    switch decoding {
    case .keyNotFound(let missing, let context):
      self.init(
        source: source, key: key, field: path(context.codingPath.isEmpty ? [missing] : context.codingPath),
        problem: "the field is missing")
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      self.init(source: source, key: key, field: path(context.codingPath), problem: context.debugDescription)
    @unknown default:
      self.init(source: source, key: key, field: "", problem: "\(error)")
    }
  }

  /// The sentence for a person.
  public var description: String {
    let place = field.isEmpty ? "" : "field \"\(field)\": "
    return "record \"\(key)\" of source \"\(source)\" does not decode: \(place)\(problem)"
  }
}
