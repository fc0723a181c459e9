import Foundation
import ForageStore

/// Writes stored records as JSON Lines or CSV.
///
///     try await Exporter(store: store).export(format: .jsonl, source: "prices") { line in
///       print(line, terminator: "")
///     }
public struct Exporter: Sendable {
  /// Output formats.
  public enum Format: String, Sendable, CaseIterable {
    /// One JSON object a line:
    /// `{"source","key","url","fields":{...},"firstSeen","lastSeen"}`.
    case jsonl
    /// RFC 4180 CSV with a header: source, key, url, one column per field,
    /// firstSeen, lastSeen. Arrays and objects are written as JSON text.
    /// A cell a spreadsheet would run as a formula is neutralised (see
    /// ``guardingFormula(_:)``) unless the export is asked for raw cells.
    case csv
  }

  let store: any Store
  /// Records read from the store per query.
  let pageSize = 1000

  /// An exporter reading the records of `store`.
  public init(store: any Store) { self.store = store }

  /// Streams the export to `write`, a chunk of text at a time: the current
  /// records, without those a completed crawl removed. Returns the number
  /// of records written.
  ///
  /// - Throws: store errors; `JSONSyntaxError` if a stored record is corrupt.
  ///
  /// - Parameter csvFormulas: true writes CSV cells as they are, even those a
  ///   spreadsheet would run as formulas (by default each gets a leading `'`).
  @discardableResult
  public func export(
    format: Format, source: String? = nil, csvFormulas: Bool = false, write: (String) throws -> Void
  ) async throws -> Int {
    func cell(_ text: String) -> String {
      Exporter.csvCell(csvFormulas ? text : Exporter.guardingFormula(text))
    }
    switch format {
    case .jsonl:
      // The stored fields are written as stored, unparsed, when they are
      // what serializing them again would write (as Forage stores them).
      var check = SerializedJSONCheck()
      return try await forEachStoredRecord(source: source) { r in
        var line = "{\"source\":"
        JSONValue.writeString(r.source, to: &line)
        line += ",\"key\":"
        JSONValue.writeString(r.key, to: &line)
        line += ",\"url\":"
        JSONValue.writeString(r.url, to: &line)
        line += ",\"fields\":"
        if check.isSerialized(r.fieldsJSON) {
          line += r.fieldsJSON
        } else {
          try JSONValue.parse(r.fieldsJSON).write(to: &line, sortedKeys: false)
        }
        line += ",\"firstSeen\":"
        JSONValue.writeString(Exporter.iso(r.firstSeen), to: &line)
        line += ",\"lastSeen\":"
        JSONValue.writeString(Exporter.iso(r.lastSeen), to: &line)
        line += "}\n"
        try write(line)
      }
    case .csv:
      // First pass: the union of field names, in first-seen order.
      var columns: [String] = []
      var known = Set<String>()
      try await forEachRecord(source: source) { _, fields in
        if case .object(let members) = fields {
          for m in members where known.insert(m.key).inserted { columns.append(m.key) }
        }
      }
      try write((["source", "key", "url"] + columns + ["firstSeen", "lastSeen"]).map(cell).joined(separator: ",") + "\r\n")
      return try await forEachRecord(source: source) { r, fields in
        var cells = [r.source, r.key, r.url]
        for c in columns {
          switch fields[c] {
          case nil, .null?: cells.append("")
          case .string(let s)?: cells.append(s)
          case let v?: cells.append(v.serialized())
          }
        }
        cells += [Exporter.iso(r.firstSeen), Exporter.iso(r.lastSeen)]
        try write(cells.map(cell).joined(separator: ",") + "\r\n")
      }
    }
  }

  /// Calls `body` with each current record and its parsed fields.
  @discardableResult
  func forEachRecord(source: String?, _ body: (StoredRecord, JSONValue) throws -> Void) async throws -> Int {
    try await forEachStoredRecord(source: source) { try body($0, try JSONValue.parse($0.fieldsJSON)) }
  }

  /// Calls `body` with each current record, its fields unparsed.
  @discardableResult
  func forEachStoredRecord(source: String?, _ body: (StoredRecord) throws -> Void) async throws -> Int {
    var after: Int64 = 0
    var count = 0
    while true {
      let batch = try await store.records(source: source, afterID: after, limit: pageSize)
      // The current records: those a completed crawl removed are history
      // (`forage changes` lists them).
      for r in batch where r.removedAt == nil {
        try body(r)
        count += 1
      }
      guard let last = batch.last, batch.count == pageSize else { return count }
      after = last.id
    }
  }

  static func csvCell(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    return "\"" + s.replacingOccurrences("\"", with: "\"\"") + "\""
  }

  /// The characters that make a spreadsheet read a cell as a formula when
  /// they start it (OWASP's list: `=`, `+`, `-`, `@`, tab, carriage return).
  static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

  /// `text` with a leading `'` when it starts like a formula (CSV
  /// injection: `=HYPERLINK(…)` from a scraped page would run in the
  /// spreadsheet that opens the export), as OWASP recommends. A plain number
  /// (`-3.5`, `+12`, `-1e3`) is left alone: no spreadsheet runs it, and a
  /// quote would turn a negative price into text.
  ///
  /// - SeeAlso: <https://owasp.org/www-community/attacks/CSV_Injection>
  public static func guardingFormula(_ text: String) -> String {
    guard let first = text.unicodeScalars.first, formulaStarts.contains(first) else { return text }
    if isPlainNumber(text) { return text }
    return "'" + text
  }

  /// True for a decimal number as JSON or a spreadsheet writes it: an
  /// optional sign, digits, an optional fraction and exponent.
  static func isPlainNumber(_ text: String) -> Bool {
    var bytes = text.utf8[...]
    func digits() -> Bool {
      let before = bytes.count
      while let b = bytes.first, b >= 0x30, b <= 0x39 { bytes = bytes.dropFirst() }
      return bytes.count < before
    }
    if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
    guard digits() else { return false }
    if bytes.first == UInt8(ascii: ".") {
      bytes = bytes.dropFirst()
      guard digits() else { return false }
    }
    if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
      bytes = bytes.dropFirst()
      if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
      guard digits() else { return false }
    }
    return bytes.isEmpty
  }

  static func iso(_ d: Date) -> String { ISODate.string(d, milliseconds: true) }
}
