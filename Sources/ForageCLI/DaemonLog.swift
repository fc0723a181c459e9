import Foundation
import Forage

/// Where `forage daemon` says what happens: human lines on standard error
/// (the default), or with `--log-format json` one JSON object per line for
/// journald and log shippers:
///
///     {"time":"2026-12-02T05:00:00.120Z","level":"info","event":"launch.finished","task":"t.refresh",
///      "counts":{"pagesFetched":20,…},"message":"pages 20 (20 fetched, 0 failed) · …"}
///
/// Every line of the daemon goes through ``log(_:_:task:source:counts:_:)``:
/// the text form is the message alone, as before.
struct DaemonLog: Sendable {
  /// The two forms of a line.
  enum Format: String, Sendable, CaseIterable {
    case text, json
  }

  /// How serious a line is. `note` is information that `--quiet` hides;
  /// `debug` shows only with `--verbose`.
  enum Level: String, Sendable {
    case debug, note, info, warning, error
  }

  var format: Format
  var out: Terminal

  /// Writes one line: `message` (text), or an object with `event`, `task`,
  /// `source` and `counts` when given (JSON).
  func log(
    _ level: Level, _ event: String, task: String? = nil, source: String? = nil, counts: [(String, Int)] = [],
    _ message: String
  ) {
    if level == .debug && !out.verbose { return }
    if level == .note && out.quiet { return }
    switch format {
    case .text:
      out.error(message)
    case .json:
      out.error(DaemonLog.jsonLine(level, event, task: task, source: source, counts: counts, message, at: Date()))
    }
  }

  /// An error with its detail under `--verbose` (``Terminal/error(_:_:)``'s
  /// rule), as a line of `event`.
  func log(_ event: String, _ context: String, _ error: any Error, task: String? = nil) {
    var text = "\(context): \(error)"
    if out.verbose { text += "\n  detail: " + String(reflecting: error) }
    log(.error, event, task: task, text)
  }

  /// One JSON object: time (ISO 8601, UTC, milliseconds), level, event,
  /// then task, source and counts when given, and the message.
  static func jsonLine(
    _ level: Level, _ event: String, task: String?, source: String?, counts: [(String, Int)], _ message: String,
    at date: Date
  ) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    formatter.timeZone = TimeZone(identifier: "UTC")
    var members: [(key: String, value: JSONValue)] = [
      ("time", .string(formatter.string(from: date))), ("level", .string(level == .note ? "info" : level.rawValue)),
      ("event", .string(event)),
    ]
    if let task { members.append(("task", .string(task))) }
    if let source { members.append(("source", .string(source))) }
    if !counts.isEmpty { members.append(("counts", .object(counts.map { ($0.0, JSONValue.number(Double($0.1))) }))) }
    members.append(("message", .string(message)))
    return JSONValue.object(members).serialized()
  }
}
