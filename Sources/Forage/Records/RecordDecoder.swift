import Foundation

/// Decodes `Decodable` values from a stored record's fields (its
/// `fieldsJSON`), without `JSONDecoder`: the text is parsed once into a
/// ``JSONValue`` and the value's containers read that tree directly.
///
///     struct Product: Decodable { let title: String; let price: Double?; let updated: Date? }
///     let product = try RecordDecoder().decode(Product.self, from: record.fieldsJSON)
///
/// What a record's fields hold, and what they decode as:
/// - numbers as any integer type (when whole and in range), `Double`,
///   `Float` or `Decimal`; strings as `String`; booleans as `Bool`;
/// - arrays as arrays (or any unkeyed `Decodable`), objects as nested structs
///   or dictionaries keyed by `String`;
/// - ISO 8601 text (`2026-11-29`, `2026-11-29T19:33:15Z`, with a fraction of a
///   second or an offset) as `Date`; a number as `Date` counts seconds since 1970;
/// - a string as `URL` when it parses as one;
/// - a missing field, or `null`, as nil for an optional property.
///
/// - Throws: `DecodingError` whose coding path names the field that does not
///   decode (``Engine/records(_:source:undecodable:)`` turns it into a
///   ``RecordDecodingError`` naming the source and the record's key too).
public struct RecordDecoder: Sendable {
  /// A decoder; it holds no state and may be shared.
  public init() {}

  /// Decodes `type` from a record's fields as JSON text.
  ///
  /// - Throws: `DecodingError.dataCorrupted` when the text is not JSON;
  ///   otherwise what decoding the parsed value throws (a `DecodingError`
  ///   naming the field).
  public func decode<T: Decodable>(_ type: T.Type, from fieldsJSON: String) throws -> T {
    let value: JSONValue
    do {
      value = try JSONValue.parse(fieldsJSON)
    } catch {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: [], debugDescription: "the stored fields are not JSON (\(error))"))
    }
    return try decode(type, from: value)
  }

  /// Decodes `type` from a parsed JSON value.
  ///
  /// - Throws: `DecodingError` naming the field (coding path) that does not decode.
  public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    try RecordValueDecoder(value, parent: nil, key: nil).decodeValue(type)
  }
}

// MARK: - The decoder

/// One value of the tree being decoded. Its coding path is found through its
/// parents only when an error or a caller asks for it: a record decoded
/// without trouble builds no path.
final class RecordValueDecoder: Decoder {
  let value: JSONValue
  let parent: RecordValueDecoder?
  let key: (any CodingKey)?

  init(_ value: JSONValue, parent: RecordValueDecoder?, key: (any CodingKey)?) {
    self.value = value
    self.parent = parent
    self.key = key
  }

  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var node: RecordValueDecoder? = self
    while let current = node, let key = current.key {
      path.append(key)
      node = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let members) = value else {
      throw mismatch([String: Int].self, expected: "an object", path: codingPath)
    }
    return KeyedDecodingContainer(RecordKeyedContainer<Key>(decoder: self, members: members))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let items) = value else {
      throw mismatch([Int].self, expected: "an array", path: codingPath)
    }
    return RecordUnkeyedContainer(decoder: self, items: items)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  /// Decodes `type` from this value, reading the kinds Foundation's types
  /// would otherwise decode through containers of their own (dates, URLs,
  /// decimals) as JSON gives them.
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if let primitive = try RecordValueDecoder.primitive(type, value, path: { self.codingPath }) { return primitive }
    return try T(from: self)
  }

  /// The value as `type` when it is a type read straight from JSON (numbers,
  /// strings, booleans, dates, URLs, decimals); nil for other types.
  static func primitive<T>(_ type: T.Type, _ value: JSONValue, path: () -> [any CodingKey]) throws -> T? {
    // Metatype comparisons, not `is` casts: they cost a pointer compare each.
    if T.self == String.self {
      guard case .string(let s) = value else { throw mismatch(type, value, expected: "a string", path: path()) }
      return (s as? T)
    }
    if T.self == Double.self { return try (number(value, type, path) as? T) }
    if T.self == Bool.self {
      guard case .bool(let b) = value else { throw mismatch(type, value, expected: "a boolean", path: path()) }
      return (b as? T)
    }
    if T.self == Int.self { return try (integer(value, Int.self, path) as? T) }
    if T.self == Date.self { return try (date(value, path) as? T) }
    if T.self == Int64.self { return try (integer(value, Int64.self, path) as? T) }
    if T.self == Int32.self { return try (integer(value, Int32.self, path) as? T) }
    if T.self == Int16.self { return try (integer(value, Int16.self, path) as? T) }
    if T.self == Int8.self { return try (integer(value, Int8.self, path) as? T) }
    if T.self == UInt.self { return try (integer(value, UInt.self, path) as? T) }
    if T.self == UInt64.self { return try (integer(value, UInt64.self, path) as? T) }
    if T.self == UInt32.self { return try (integer(value, UInt32.self, path) as? T) }
    if T.self == UInt16.self { return try (integer(value, UInt16.self, path) as? T) }
    if T.self == UInt8.self { return try (integer(value, UInt8.self, path) as? T) }
    if T.self == Float.self { return try (Float(number(value, type, path)) as? T) }
    if T.self == URL.self {
      guard case .string(let s) = value, let url = URL(string: s) else {
        throw mismatch(type, value, expected: "a URL", path: path())
      }
      return (url as? T)
    }
    if T.self == Decimal.self {
      guard case .number(let n) = value else { throw mismatch(type, value, expected: "a number", path: path()) }
      return ((Decimal(string: JSONValue.format(n)) ?? Decimal(n)) as? T)
    }
    return nil
  }

  static func number(_ value: JSONValue, _ type: Any.Type, _ path: () -> [any CodingKey]) throws -> Double {
    guard case .number(let n) = value else { throw mismatch(type, value, expected: "a number", path: path()) }
    return n
  }

  static func integer<I: FixedWidthInteger>(_ value: JSONValue, _ type: I.Type, _ path: () -> [any CodingKey]) throws
    -> I
  {
    let n = try number(value, type, path)
    guard n == n.rounded(), let exact = I(exactly: n) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: path(), debugDescription: "\(JSONValue.format(n)) is not a whole number that fits \(I.self)"))
    }
    return exact
  }

  static func date(_ value: JSONValue, _ path: () -> [any CodingKey]) throws -> Date {
    switch value {
    case .string(let s):
      guard let date = ISODate.parse(s) else {
        throw DecodingError.dataCorrupted(
          DecodingError.Context(codingPath: path(), debugDescription: "\"\(s)\" is not an ISO 8601 date"))
      }
      return date
    case .number(let n): return Date(timeIntervalSince1970: n)
    default: throw mismatch(Date.self, value, expected: "an ISO 8601 date", path: path())
    }
  }

  func mismatch(_ type: Any.Type, expected: String, path: [any CodingKey]) -> DecodingError {
    RecordValueDecoder.mismatch(type, value, expected: expected, path: path)
  }

  static func mismatch(_ type: Any.Type, _ value: JSONValue, expected: String, path: [any CodingKey]) -> DecodingError {
    if case .null = value {
      return DecodingError.valueNotFound(
        type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found null"))
    }
    return DecodingError.typeMismatch(
      type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found \(value.typeName)"))
  }
}

extension RecordValueDecoder: SingleValueDecodingContainer {
  func decodeNil() -> Bool {
    if case .null = value { return true }
    return false
  }

  func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
  func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
  func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
  func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
  func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
}

// MARK: - Containers

/// An object's members, looked up by key. Records have few fields, so a
/// linear search over the members in their stored order beats hashing.
struct RecordKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: RecordValueDecoder
  let members: [(key: String, value: JSONValue)]

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }

  func contains(_ key: Key) -> Bool { lookup(key) != nil }

  func lookup(_ key: Key) -> JSONValue? {
    let name = key.stringValue
    for member in members where member.key == name { return member.value }
    return nil
  }

  func required(_ key: Key, _ type: Any.Type) throws -> JSONValue {
    guard let value = lookup(key) else {
      throw DecodingError.keyNotFound(
        key, DecodingError.Context(codingPath: codingPath + [key], debugDescription: "the field is missing"))
    }
    return value
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let value = lookup(key) else { return true }
    if case .null = value { return true }
    return false
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let value = try required(key, type)
    if let primitive = try RecordValueDecoder.primitive(type, value, path: { self.codingPath + [key] }) {
      return primitive
    }
    return try T(from: RecordValueDecoder(value, parent: decoder, key: key))
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let value = lookup(key) else { return nil }
    if case .null = value { return nil }
    if let primitive = try RecordValueDecoder.primitive(type, value, path: { self.codingPath + [key] }) {
      return primitive
    }
    return try T(from: RecordValueDecoder(value, parent: decoder, key: key))
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type as Bool.Type, key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type as String.Type, key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type as Double.Type, key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type as Int.Type, key) }

  /// The fast path of the common primitives (no generic dispatch).
  private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
    let value = try required(key, type)
    return try RecordValueDecoder.primitive(type, value, path: { self.codingPath + [key] })!
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try RecordValueDecoder(required(key, type), parent: decoder, key: key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try RecordValueDecoder(required(key, [Any].self), parent: decoder, key: key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    RecordValueDecoder(lookup(RecordCodingKey.superKey()) ?? .null, parent: decoder, key: RecordCodingKey.superKey())
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    RecordValueDecoder(lookup(key) ?? .null, parent: decoder, key: key)
  }

  private func lookup(_ key: RecordCodingKey) -> JSONValue? {
    for member in members where member.key == key.stringValue { return member.value }
    return nil
  }
}

/// An array's elements, read in order.
struct RecordUnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: RecordValueDecoder
  let items: [JSONValue]
  var currentIndex = 0

  init(decoder: RecordValueDecoder, items: [JSONValue]) {
    self.decoder = decoder
    self.items = items
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  private var indexKey: RecordCodingKey { RecordCodingKey(index: currentIndex) }

  private func next(_ type: Any.Type) throws -> JSONValue {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type,
        DecodingError.Context(
          codingPath: codingPath + [indexKey], debugDescription: "the array has only \(items.count) elements"))
    }
    return items[currentIndex]
  }

  mutating func decodeNil() throws -> Bool {
    guard case .null = try next(Never.self) else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let value = try next(type)
    let key = indexKey
    let decoded: T
    if let primitive = try RecordValueDecoder.primitive(type, value, path: { self.codingPath + [key] }) {
      decoded = primitive
    } else {
      decoded = try T(from: RecordValueDecoder(value, parent: decoder, key: key))
    }
    currentIndex += 1
    return decoded
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    let container = try RecordValueDecoder(next(type), parent: decoder, key: indexKey).container(keyedBy: type)
    currentIndex += 1
    return container
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let container = try RecordValueDecoder(next([Any].self), parent: decoder, key: indexKey).unkeyedContainer()
    currentIndex += 1
    return container
  }

  mutating func superDecoder() throws -> any Decoder {
    let sub = RecordValueDecoder(try next(Any.self), parent: decoder, key: indexKey)
    currentIndex += 1
    return sub
  }
}

/// A coding key of the decoder's own: an array index, or `super`.
struct RecordCodingKey: CodingKey {
  var stringValue: String
  var intValue: Int?

  init(stringValue: String) { self.stringValue = stringValue }
  init(intValue: Int) { self.init(index: intValue) }
  init(index: Int) {
    stringValue = "\(index)"
    intValue = index
  }

  static func superKey() -> RecordCodingKey { RecordCodingKey(stringValue: "super") }
}
