import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageSupport

/// Loads the config at `path`, printing its problems when it is invalid.
///
/// - Parameter command: the command that needs a "tasks" array, if any
///   (its name goes into the message when there is none).
func loadConfig(_ path: String, needingTasksFor command: String? = nil, _ out: Terminal) -> ForageConfig? {
  let loaded: ForageConfig
  do {
    loaded = try ForageConfig.load(path: path) { out.error("warning: \(path): \($0)") }
  } catch {
    out.error("\(error)")
    return nil
  }
  if let command, loaded.tasks.isEmpty {
    out.error("forage \(command): \(path) has no tasks; add a \"tasks\" array")
    return nil
  }
  return loaded
}

/// Parses a `--budget` value.
func parseBudget(_ text: String?) throws(UsageError) -> Duration? {
  guard let text else { return nil }
  guard let d = Units.duration(text), d > .zero else {
    throw UsageError("--budget expects a duration such as 30s, 5m or 1h, not \"\(text)\"")
  }
  guard d >= EngineDefaults.minimumBudget else {
    throw UsageError(
      "--budget \(text) is too short: a launch stops starting requests \(Units.format(EngineDefaults.stopMargin)) "
        + "before its end, so nothing would be fetched; give at least \(Units.format(EngineDefaults.minimumBudget))")
  }
  return d
}

/// A line of running totals for the progress display.
func progressLine(_ s: RunSummary) -> String {
  "pages \(s.pages) (\(s.pagesFetched) fetched, \(s.pagesFailed) failed) · records \(s.recordsNew) new, \(s.recordsChanged) changed · \(s.bytes / 1024) KiB"
}

/// The live line of a running launch: pages, failures, rate, records, and
/// the time left in its budget.
func progressLine(_ s: RunSummary, elapsed: Duration, budget: Duration?) -> String {
  let seconds = max(elapsed.seconds, 0.001)
  let rate = Double(s.pages) / seconds
  let rateText = rate >= 10 ? String(Int(rate.rounded())) : String(format: "%.1f", rate)
  var line = "pages \(s.pages) (\(s.pagesFailed) failed) · \(rateText)/s · records \(s.recordsNew) new, "
    + "\(s.recordsChanged) changed · \(s.bytes / 1024) KiB"
  if let budget {
    let left = max(0, (budget - elapsed).seconds)
    line += " · \(Int(left.rounded(.up)))s left"
  }
  return line
}

/// Encodes a value as pretty, key-sorted JSON text.
func jsonText<T: Encodable>(_ value: T) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
  encoder.dateEncodingStrategy = .iso8601
  guard let data = try? encoder.encode(value) else { return "{}" }
  return String(decoding: data, as: UTF8.self)
}

/// A thread-safe box for the last progress update, read by the printer.
final class ProgressThrottle: Sendable {
  /// When the line was last printed; printing happens under the lock too,
  /// so lines never interleave.
  private let last = Locked(ContinuousClock.now - .seconds(1))
  let out: Terminal
  let started = ContinuousClock.now
  /// The launch's budget, for the time left.
  let budget: Duration?

  init(_ out: Terminal, budget: Duration? = nil) {
    self.out = out
    self.budget = budget
  }

  /// Redraws the line (at most ten times a second), after `label` when
  /// given (the task of a daemon's launch), timed from `since` (the launch's
  /// start; default: this throttle's).
  func update(_ s: RunSummary, label: String? = nil, budget: Duration? = nil, since: ContinuousClock.Instant? = nil) {
    guard out.drawsProgress else { return }
    last.withLock { last in
      let now = ContinuousClock.now
      guard now - last >= .milliseconds(100) else { return }
      last = now
      let line = progressLine(s, elapsed: now - (since ?? started), budget: budget ?? self.budget)
      out.progress(label.map { "\($0): \(line)" } ?? line)
    }
  }
}

/// Opens a store that a reading command (`status`, `changes`, `report`,
/// `export`, `health` without `accept`, `download --list`) names, to read
/// it only: one that does not exist, an empty file, a PostgreSQL database
/// without Forage's tables or a store an older Forage wrote is refused,
/// never created or migrated; a read-only store is opened read-only. Nil
/// after printing why (`command: no store at PATH`).
func openExistingStore(_ location: String, for command: String, _ out: Terminal) -> (any Store)? {
  guard FileManager.default.fileExists(atPath: location) || location.contains("://") else {
    out.error("\(command): no store at \(StoreLocation.redacted(location)) (a command that only reads creates none)")
    return nil
  }
  do { return try Engine.openStore(location, forReading: true) } catch {
    out.error(command, error)
    return nil
  }
}
