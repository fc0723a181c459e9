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
    case csv
  }

  let store: any Store
  /// Records read from the store per query.
  let pageSize = 1000

  public init(store: any Store) { self.store = store }

  /// Streams the export to `write`, a chunk of text at a time: the current
  /// records, without those a completed crawl removed. Returns the number
  /// of records written.
  ///
  /// - Throws: store errors; `JSONSyntaxError` if a stored record is corrupt.
  @discardableResult
  public func export(format: Format, source: String? = nil, write: (String) throws -> Void) async throws -> Int {
    switch format {
    case .jsonl:
      return try await forEachRecord(source: source) { r, fields in
        var line = JSONValue.object([
          ("source", .string(r.source)), ("key", .string(r.key)), ("url", .string(r.url)), ("fields", fields),
          ("firstSeen", .string(Exporter.iso(r.firstSeen))), ("lastSeen", .string(Exporter.iso(r.lastSeen))),
        ]).serialized()
        line += "\n"
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
      try write((["source", "key", "url"] + columns + ["firstSeen", "lastSeen"]).map(Exporter.csvCell).joined(separator: ",") + "\r\n")
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
        try write(cells.map(Exporter.csvCell).joined(separator: ",") + "\r\n")
      }
    }
  }

  @discardableResult
  func forEachRecord(source: String?, _ body: (StoredRecord, JSONValue) throws -> Void) async throws -> Int {
    var after: Int64 = 0
    var count = 0
    while true {
      let batch = try await store.records(source: source, afterID: after, limit: pageSize)
      // The current records: those a completed crawl removed are history
      // (`forage changes` lists them).
      for r in batch where r.removedAt == nil {
        try body(r, try JSONValue.parse(r.fieldsJSON))
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

  static func iso(_ d: Date) -> String { ISODate.string(d, milliseconds: true) }
}
