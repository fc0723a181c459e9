/// HTTP header fields: multi-valued, matched case-insensitively, kept in the order
/// they were received or added.
///
///     var headers: HTTPHeaders = ["Accept": "text/html"]
///     headers.add("Set-Cookie", "a=1")
///     headers.add("set-cookie", "b=2")
///     headers.values(for: "SET-COOKIE")   // ["a=1", "b=2"]
///     headers["accept"]                   // "text/html"
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-field-names>
public struct HTTPHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral {
  /// One header field as received: the name keeps its original spelling.
  public struct Field: Sendable, Hashable {
    /// The field name, spelled as received or added.
    public var name: String
    /// The field value, without surrounding whitespace.
    public var value: String
    /// Creates a field.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// The fields in order.
  public private(set) var fields: [Field] = []

  /// Creates an empty set of headers.
  public init() {}

  /// Creates an empty set of headers with room for `capacity` fields.
  init(capacity: Int) { fields.reserveCapacity(capacity) }

  /// Creates headers from name-value pairs, keeping their order.
  public init(_ pairs: [(String, String)]) {
    fields = pairs.map { Field(name: $0.0, value: $0.1) }
  }

  /// Creates headers from a dictionary literal.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.init(elements)
  }

  /// The number of fields (a name sent twice counts twice).
  public var count: Int { fields.count }

  /// True when there are no fields.
  public var isEmpty: Bool { fields.isEmpty }

  /// The first value for `name` (case-insensitive); setting replaces every value of
  /// `name` with one value, or removes them when set to `nil`.
  public subscript(name: String) -> String? {
    get { fields.first { Self.same($0.name, name) }?.value }
    set {
      if let newValue {
        replaceOrAdd(name, newValue)
      } else {
        remove(name)
      }
    }
  }

  /// Every value for `name`, in order.
  public func values(for name: String) -> [String] {
    fields.filter { Self.same($0.name, name) }.map(\.value)
  }

  /// True when at least one field is named `name`.
  public func contains(_ name: String) -> Bool {
    fields.contains { Self.same($0.name, name) }
  }

  /// Appends a field, keeping any earlier fields of the same name.
  public mutating func add(_ name: String, _ value: String) {
    fields.append(Field(name: name, value: value))
  }

  /// Replaces every field named `name` by one field, at the position of the first.
  public mutating func replaceOrAdd(_ name: String, _ value: String) {
    if let first = fields.firstIndex(where: { Self.same($0.name, name) }) {
      fields[first].value = value
      var index = fields.index(after: first)
      while index < fields.endIndex {
        if Self.same(fields[index].name, name) {
          fields.remove(at: index)
        } else {
          index += 1
        }
      }
    } else {
      add(name, value)
    }
  }

  /// Removes every field named `name`.
  public mutating func remove(_ name: String) {
    fields.removeAll { Self.same($0.name, name) }
  }

  /// ASCII case-insensitive comparison of two field names.
  static func same(_ a: String, _ b: String) -> Bool {
    let a = a.utf8, b = b.utf8
    guard a.count == b.count else { return false }
    for (x, y) in zip(a, b) where x != y {
      if x | 0x20 != y | 0x20 { return false }
      let lower = x | 0x20
      if lower < 0x61 || lower > 0x7A { return false }
    }
    return true
  }
}

extension HTTPHeaders: Sequence {
  /// Iterates over the fields in order.
  public func makeIterator() -> IndexingIterator<[Field]> {
    fields.makeIterator()
  }
}

extension HTTPHeaders: CustomStringConvertible {
  /// The field names only: values can hold secrets (cookies, authorization).
  public var description: String {
    "HTTPHeaders(\(fields.map(\.name).joined(separator: ", ")))"
  }
}

extension HTTPHeaders {
  /// Replaces the value of the last field (for obs-fold continuation lines).
  mutating func replaceLast(value: String) {
    guard !fields.isEmpty else { return }
    fields[fields.count - 1].value = value
  }
}

extension String {
  /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
  var trimmingSpaces: String {
    var view = Substring(self)
    while let first = view.first, first == " " || first == "\t" { view = view.dropFirst() }
    while let last = view.last, last == " " || last == "\t" { view = view.dropLast() }
    return String(view)
  }
}
