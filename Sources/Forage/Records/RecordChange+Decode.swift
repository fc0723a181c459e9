import Foundation
import ForageStore

extension RecordChange {
  /// The record's fields before and after the change, decoded as `type`:
  /// `before` is nil for a new record, `after` for a removed one.
  ///
  ///     let (before, after) = try change.decode(Product.self)
  ///     if let before, let after, before.price != after.price { notePriceChange(before, after) }
  ///
  /// Fields decode as ``RecordDecoder`` says (ISO 8601 text as `Date`, a
  /// missing field as nil for an optional property).
  ///
  /// - Throws: ``RecordDecodingError`` naming the source, the key and the
  ///   field when either side does not decode.
  public func decode<T: Decodable>(_ type: T.Type) throws -> (before: T?, after: T?) {
    let decoder = RecordDecoder()
    func side(_ json: String?) throws -> T? {
      guard let json else { return nil }
      do { return try decoder.decode(type, from: json) } catch {
        throw RecordDecodingError(source: source, key: key, error)
      }
    }
    return (try side(beforeJSON), try side(afterJSON))
  }
}
