import Foundation
import Forage
import ForageStore

/// `forage export`: writes stored records as JSON Lines or CSV.
struct ExportCommand: Command {
  static let name = "export"
  static let abstract = "Write stored records as JSON Lines or CSV."
  static let help = """
    Usage: forage export --store PATH [--source NAME] [--format jsonl|csv] [--out FILE]

    Writes every stored record (or one source's) to standard output or FILE.
    JSON Lines rows: {"source","key","url","fields":{...},"firstSeen","lastSeen"}.
    CSV: source, key, url, one column per field, firstSeen, lastSeen.

    Options:
      --store PATH      The SQLite file to read (required).
      --source NAME     Only this source's records.
      --format FORMAT   jsonl (default) or csv.
      --out FILE        Write to FILE instead of standard output.
    """

  var store: String
  var source: String?
  var format = Exporter.Format.jsonl
  var outFile: String?

  init(_ args: inout ArgumentList) throws(UsageError) {
    guard let s = try args.option("--store") else { throw UsageError("missing --store PATH") }
    store = s
    source = try args.option("--source")
    if let f = try args.option("--format") {
      guard let parsed = Exporter.Format(rawValue: f) else {
        throw UsageError("--format expects jsonl or csv, not \"\(f)\"")
      }
      format = parsed
    }
    outFile = try args.option("--out")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard FileManager.default.fileExists(atPath: store) || store.contains("://") else {
      out.error("forage export: no store at \(store)")
      return .badInput
    }
    let opened: any Store
    do { opened = try openStore(store) } catch {
      out.error("forage export: \(error)")
      return .badInput
    }
    // With --out, write beside the target and rename at the end, so a failed
    // export leaves the previous file as it was.
    let partial = outFile.map { $0 + ".partial" }
    var handle: FileHandle?
    if let partial {
      guard FileManager.default.createFile(atPath: partial, contents: nil), let h = FileHandle(forWritingAtPath: partial) else {
        out.error("forage export: cannot write \(partial)")
        return .badInput
      }
      handle = h
    }
    defer {
      try? handle?.close()
      if let partial { try? FileManager.default.removeItem(atPath: partial) }
    }
    do {
      var buffer = ""
      let count = try await Exporter(store: opened).export(format: format, source: source) { chunk in
        buffer += chunk
        if buffer.utf8.count > 1 << 16 {
          if let handle { handle.write(Data(buffer.utf8)) } else { out.write(1, buffer) }
          buffer = ""
        }
      }
      if let handle { handle.write(Data(buffer.utf8)) } else { out.write(1, buffer) }
      if let outFile, let partial {
        try handle?.close()
        handle = nil
        if FileManager.default.fileExists(atPath: outFile) { try FileManager.default.removeItem(atPath: outFile) }
        try FileManager.default.moveItem(atPath: partial, toPath: outFile)
        out.error("wrote \(count) records to \(outFile)")
      }
      return .ok
    } catch {
      out.error("forage export: \(error)")
      return .jobFailed
    }
  }
}
