import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
import ForageStore

/// `forage status`: is the background work healthy?
struct StatusCommand: Command {
  static let name = "status"
  static let abstract = "Show whether tasks, sources and notifications are healthy."
  static let arguments: [Argument] = [
    .option("--store", "PATH", "The store to read: a SQLite file or a postgres:// URL.", required: true),
    .option("--config", "FILE", "Also list the config's tasks and sources that never ran."),
    .option("--launches", "N", "Launches shown per task.", default: "5"),
    .option("--failing", "N", "A source whose every page failed in N launches in a row needs attention.", default: "3"),
    .flag("--json", "Print the status as one JSON object."),
  ]
  static let discussion = """
    Per task: its last launches (completed, stopped by budget, interrupted,
    failed, or unfinished when no end was recorded) with their duration and
    pages (for an unfinished one, a killed run say, the pages it had
    committed), and when its pending request may run. Per source: the age of its
    newest data, records, changes in the last day, the last launch's pages and
    failures, and the errors that repeat (grouped by cause, with the first
    URL). The notification outbox: pending, retrying, delivered, dead. Background
    downloads: queued, running, done, failed (and why).
    """
  static let notes = """
    Exit status: 0 healthy, 1 something needs attention (a source whose every
    page failed in its last N launches, a source whose changes are held (see
    forage health), dead notifications, failed downloads), 2 bad input. Use it
    as a health check.
    """

  var store: String
  var config: String?
  var launches = 5
  var failing = 3
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    guard let s = try args.option("--store") else { throw UsageError("missing --store PATH") }
    store = s
    config = try args.option("--config")
    launches = try StatusCommand.count(try args.option("--launches"), "--launches") ?? launches
    failing = try StatusCommand.count(try args.option("--failing"), "--failing") ?? failing
    json = args.flag("--json")
    try args.expectNoMore()
  }

  static func count(_ text: String?, _ name: String) throws(UsageError) -> Int? {
    guard let text else { return nil }
    guard let n = Int(text), n > 0 else { throw UsageError("\(name) expects a whole number above 0, not \"\(text)\"") }
    return n
  }

  func run(_ out: Terminal) async -> ExitStatus {
    var loaded: ForageConfig?
    if let config {
      guard let c = loadConfig(config, out) else { return .badInput }
      loaded = c
    }
    guard let opened = openExistingStore(store, for: "forage status", out) else { return .badInput }
    do {
      let status = try await StoreStatus.gather(store: opened, config: loaded, launches: launches, failingAfter: failing)
      try? await opened.close()
      if json {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        out.print(String(decoding: try encoder.encode(status), as: UTF8.self))
      } else {
        out.print(status.text(colour: useColour(fd: 1)))
      }
      return status.attention.isEmpty ? .ok : .jobFailed
    } catch {
      try? await opened.close()
      out.error("forage status", error)
      return .jobFailed
    }
  }
}

/// Whether to colour what goes to `fd`: `NO_COLOR` (any value) turns colour
/// off, `FORCE_COLOR` (not `0`) on; otherwise only on a terminal.
///
/// - SeeAlso: <https://no-color.org>, <https://force-color.org>
func useColour(fd: Int32) -> Bool {
  let env = ProcessInfo.processInfo.environment
  if let no = env["NO_COLOR"], !no.isEmpty { return false }
  if let force = env["FORCE_COLOR"], !force.isEmpty, force != "0" { return true }
  return isatty(fd) != 0
}
