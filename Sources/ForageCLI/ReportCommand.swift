import Foundation
import Forage
import ForageScheduler
import ForageStore

/// `forage report`: the store as one self-contained HTML page.
struct ReportCommand: Command {
  static let name = "report"
  static let abstract = "Write an HTML report: launches, freshness, changes, errors."
  static let arguments: [Argument] = [
    .option("--store", "PATH", "The store to read: a SQLite file or a postgres:// URL.", required: true),
    .option("--config", "FILE", "Also list the config's tasks and sources, and forecast freshness with the simulator."),
    .option(
      "--out", "FILE",
      "The HTML file to write. An existing regular file is replaced only once the report is complete; a folder, "
        + "a device, the store, any SQLite database or a name SQLite reads as a database's side file (X-journal, "
        + "X-wal, X-shm) is refused (exit 2) and nothing is touched.",
      required: true),
    .option("--days", "N", "Days of history the timeline and the freshness charts cover.", default: "7"),
    .option(
      "--profile", "NAME|FILE", "The device the forecast simulates (with --config; see forage simulate).",
      default: "commuter"),
  ]
  static let discussion = """
    Writes one HTML file with inline CSS and SVG (no script, no outside
    files, no links), readable on a phone or a desktop, light or dark: a
    timeline of each task's launches over the last days (completed, stopped
    by budget, interrupted, failed, unfinished); how old each source's data
    was across launches; recent changes with their field differences;
    errors grouped by cause; pages per launch and time per page per source;
    the notification outbox (pending, retrying, delivered, dead and why).
    With --config, also a freshness forecast: 3 simulated days on the
    --profile device, seed 1. The device's state at each launch shows when a
    scheduler started it (the daemon, the simulator).
    Every stored text (titles, keys, URLs, errors) is escaped: it shows as
    text and cannot add markup.
    """
  static let notes = """
    Exit status: 0 written, 1 the store could not be read or the page not
    written, 2 bad input (no store, a bad config, an --out that is not a
    file to write or in a folder that cannot be written; nothing is written).
    """

  var store: String
  var config: String?
  var outFile: String
  var days = 7
  var profile = "commuter"

  init(_ args: inout ArgumentList) throws(UsageError) {
    // Required: the parser has refused a command line without them.
    guard let s = try args.option("--store") else { throw UsageError("missing --store PATH") }
    store = s
    config = try args.option("--config")
    guard let o = try args.option("--out") else { throw UsageError("missing --out FILE") }
    outFile = o
    if let d = try args.option("--days") {
      guard let n = Int(d), (1...365).contains(n) else { throw UsageError("--days expects a number from 1 to 365, not \"\(d)\"") }
      days = n
    }
    profile = try args.option("--profile") ?? profile
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    var loaded: ForageConfig?
    if let config {
      guard let c = loadConfig(config, out) else { return .badInput }
      loaded = c
    }
    // Check the output before opening anything: a folder, a device or the
    // store itself is refused with nothing touched.
    let device: DeviceProfile
    do { device = try DeviceProfile.named(orPath: profile) } catch {
      out.error("forage report", error)
      return .badInput
    }
    let output: OutputFile
    do { output = try OutputFile(path: outFile, protecting: OutputFile.protectingStore(store)) } catch {
      out.error("forage report", error)
      return .badInput
    }
    // The page goes to a new file beside the target that replaces it only
    // when complete: a failed write leaves the previous file as it was. It is
    // created first, so a folder it cannot be written in is bad input, found
    // before the store is read.
    let writer: OutputFile.Writer
    do { writer = try output.open() } catch {
      out.error("forage report", error)
      return .badInput
    }
    guard let opened = openExistingStore(store, for: "forage report", out) else { return .badInput }
    let html: String
    do {
      var options = HTMLReport.Options()
      options.subtitle = store
      options.days = Double(days)
      options.profile = device
      html = try await HTMLReport.render(store: opened, config: loaded, options: options)
    } catch {
      try? await opened.close()
      out.error("forage report", error)
      return .jobFailed
    }
    try? await opened.close()
    do {
      try writer.write(html)
      try writer.commit()
    } catch {
      out.error("forage report", error)
      return .jobFailed
    }
    out.note("wrote \(output.path) (\((html.utf8.count + 1023) / 1024) KB)")
    return .ok
  }
}
