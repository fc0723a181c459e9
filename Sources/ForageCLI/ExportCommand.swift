import Foundation
import Forage
import ForageStore

/// `forage export`: writes stored records as JSON Lines or CSV.
struct ExportCommand: Command {
  static let name = "export"
  static let abstract = "Write stored records as JSON Lines or CSV."
  static let arguments: [Argument] = [
    .option("--store", "PATH", "The store to read: a SQLite file or a postgres:// URL.", required: true),
    .option("--source", "NAME", "Only this source's records."),
    .option("--format", "jsonl|csv", "The output format.", default: "jsonl"),
    .option(
      "--out", "FILE",
      "Write to FILE instead of standard output. An existing regular file is replaced only once the export is "
        + "complete; a folder, a device, the store, any SQLite database or a name SQLite reads as a database's "
        + "side file (X-journal, X-wal, X-shm) is refused (exit 2) and nothing is touched."),
    .flag(
      "--csv-formulas",
      "With --format csv: write cells that start with =, +, -, @, a tab or a carriage return as they are. By "
        + "default each gets a leading ' so that a spreadsheet shows it as text instead of running it as a formula "
        + "(plain numbers such as -3.5 are left alone)."),
  ]
  static let discussion = """
    Writes every current record (or one source's) to standard output or FILE;
    records a completed crawl no longer saw are left out (forage changes lists
    them as removed).
    JSON Lines rows: {"source","key","url","fields":{...},"firstSeen","lastSeen"}.
    CSV: source, key, url, one column per field, firstSeen, lastSeen; a cell
    that starts with =, +, -, @, a tab or a carriage return (other than a
    plain number) gets a leading ' (OWASP's advice against CSV injection:
    text from a page must not run as a spreadsheet formula).
    """

  var store: String
  var source: String?
  var format = Exporter.Format.jsonl
  var outFile: String?
  var csvFormulas = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    // Required: the parser has refused a command line without it.
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
    csvFormulas = args.flag("--csv-formulas")
    if csvFormulas && format != .csv { throw UsageError("--csv-formulas goes with --format csv") }
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard FileManager.default.fileExists(atPath: store) || store.contains("://") else {
      out.error("forage export: no store at \(store) (a command that only reads creates none)")
      return .badInput
    }
    // Check the output before opening anything: a folder, a device or the
    // store itself is refused with nothing touched.
    var output: OutputFile?
    if let outFile {
      do { output = try OutputFile(path: outFile, protecting: OutputFile.protectingStore(store)) } catch {
        out.error("forage export", error)
        return .badInput
      }
    }
    let engine: Engine
    do { engine = Engine(config: ForageConfig(sources: []), store: try Engine.openStore(store, forReading: true)) } catch {
      out.error("forage export", error)
      return .badInput
    }
    // With --out, the records go to a new file beside the target that
    // replaces it only when complete: a failed export leaves the previous
    // file as it was.
    var writer: OutputFile.Writer?
    do { writer = try output?.open() } catch {
      out.error("forage export", error)
      try? await engine.close()
      return .badInput
    }
    do {
      var buffer = ""
      let count = try await engine.export(format: format, source: source, csvFormulas: csvFormulas) { chunk in
        buffer += chunk
        if buffer.utf8.count > 1 << 16 {
          if let writer { try writer.write(buffer) } else { out.write(1, buffer) }
          buffer = ""
        }
      }
      if let writer { try writer.write(buffer) } else { out.write(1, buffer) }
      if let writer, let output {
        try writer.commit()
        out.note("wrote \(count) records to \(output.path)")
      }
      try? await engine.close()
      return .ok
    } catch let error as EngineError {
      // An unknown --source: nothing was written.
      out.error("forage export", error)
      try? await engine.close()
      return .badInput
    } catch {
      out.error("forage export", error)
      try? await engine.close()
      return .jobFailed
    }
  }
}
