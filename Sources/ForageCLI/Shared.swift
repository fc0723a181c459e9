import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageSupport

/// Opens the store named by `--store` or the config: a SQLite path, or a
/// `postgres://` URL (not available yet).
///
/// - Throws: `UsageError` for a PostgreSQL URL; the store's own error
///   otherwise (its description for a person, its detail under `--verbose`).
func openStore(_ location: String) throws -> any Store {
  if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
    throw UsageError("PostgreSQL stores are not available in this version; use a SQLite path")
  }
  return try SQLiteStore(path: location)
}

/// Loads the config at `path`, printing its problems when it is invalid.
///
/// - Parameter command: the command that needs a "tasks" array, if any
///   (its name goes into the message when there is none).
func loadConfig(_ path: String, needingTasksFor command: String? = nil, _ out: Terminal) -> ForageConfig? {
  let loaded: ForageConfig
  do { loaded = try ForageConfig.load(path: path) } catch {
    out.error("\(error)")
    return nil
  }
  if let command, loaded.tasks.isEmpty {
    out.error("forage \(command): \(path) has no tasks; add a \"tasks\" array")
    return nil
  }
  return loaded
}

/// The store location for a config: `--store`, else the config's `store`
/// (relative to the config file's folder), else `forage.sqlite` beside it.
func storeLocation(option: String?, config: ForageConfig, configPath: String) -> String {
  if let option { return option }
  let name = config.store ?? Defaults.storePath
  if name.hasPrefix("/") || name.contains("://") { return name }
  let folder = (configPath as NSString).deletingLastPathComponent
  return folder.isEmpty ? name : (folder as NSString).appendingPathComponent(name)
}

/// The platform's default transport.
func defaultTransport() -> any Transport {
  #if os(Linux)
  return CurlTransport()
  #else
  return URLSessionTransport()
  #endif
}

/// Parses a `--budget` value.
func parseBudget(_ text: String?) throws(UsageError) -> Duration? {
  guard let text else { return nil }
  guard let d = Units.duration(text), d > .zero else {
    throw UsageError("--budget expects a duration such as 30s, 5m or 1h, not \"\(text)\"")
  }
  guard d >= Defaults.minimumBudget else {
    throw UsageError(
      "--budget \(text) is too short: a launch stops starting requests \(Units.format(Defaults.stopMargin)) "
        + "before its end, so nothing would be fetched; give at least \(Units.format(Defaults.minimumBudget))")
  }
  return d
}

/// A line of running totals for the progress display.
func progressLine(_ s: JobSummary) -> String {
  "pages \(s.pages) (\(s.pagesFetched) fetched, \(s.pagesFailed) failed) · records \(s.recordsNew) new, \(s.recordsChanged) changed · \(s.bytes / 1024) KiB"
}

/// Encodes a value as pretty, key-sorted JSON text.
func jsonText<T: Encodable>(_ value: T) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
  guard let data = try? encoder.encode(value) else { return "{}" }
  return String(decoding: data, as: UTF8.self)
}

/// A thread-safe box for the last progress update, read by the printer.
final class ProgressThrottle: Sendable {
  /// When the line was last printed; printing happens under the lock too,
  /// so lines never interleave.
  private let last = Locked(ContinuousClock.now - .seconds(1))
  let out: Terminal

  init(_ out: Terminal) { self.out = out }

  func update(_ s: JobSummary) {
    last.withLock { last in
      let now = ContinuousClock.now
      guard now - last >= .milliseconds(100) else { return }
      last = now
      out.progress(progressLine(s))
    }
  }
}
