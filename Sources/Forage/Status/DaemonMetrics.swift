import Foundation
import ForageStore
import ForageSupport

/// What a running daemon has done since it started, for its `/metrics`
/// page: launches by task and outcome, pages and records by source. The
/// counters live in the process (a restart starts them at zero, which
/// Prometheus reads as a counter reset); what the store knows (data age,
/// the outbox, downloads) is read at each scrape by ``page(store:config:now:)``.
///
///     let metrics = DaemonMetrics()
///     metrics.record(task: "t.refresh", summary: summary)   // each finished launch
///     let text = try await metrics.page(store: store, config: config)
public final class DaemonMetrics: Sendable {
  private struct Counts: Sendable {
    var launches: [Pair: Int] = [:]
    var pages: [Pair: Int] = [:]
    var records: [Pair: Int] = [:]
  }

  /// Two label values (task and outcome; source and kind).
  private struct Pair: Hashable, Sendable {
    var a: String, b: String
  }

  private let counts = Locked(Counts())

  /// A daemon's counters, all zero.
  public init() {}

  /// Counts a finished launch of `task`: its outcome (`failed` when the job
  /// failed, `summary` nil), and each source's pages and records.
  public func record(task: String, summary: RunSummary?) {
    counts.withLock { c in
      c.launches[Pair(a: task, b: summary?.outcome.rawValue ?? RunOutcome.failed.rawValue), default: 0] += 1
      for s in summary?.sources ?? [] {
        c.pages[Pair(a: s.name, b: "fetched"), default: 0] += s.pagesFetched
        c.pages[Pair(a: s.name, b: "not_modified"), default: 0] += s.pagesNotModified
        c.pages[Pair(a: s.name, b: "fresh"), default: 0] += s.pagesFresh
        c.pages[Pair(a: s.name, b: "failed"), default: 0] += s.pagesFailed
        c.records[Pair(a: s.name, b: "new"), default: 0] += s.recordsNew
        c.records[Pair(a: s.name, b: "changed"), default: 0] += s.recordsChanged
        c.records[Pair(a: s.name, b: "removed"), default: 0] += s.recordsRemoved
      }
    }
  }

  /// The metrics page in the Prometheus text format (version 0.0.4): the
  /// process's counters, then what `store` holds now, with `status` (the
  /// rules of `forage status`) for the health gauge and each source's age.
  ///
  /// - SeeAlso: <https://prometheus.io/docs/instrumenting/exposition_formats/>
  public func page(status: StoreStatus, config: ForageConfig) -> String {
    let c = counts.withLock { $0 }
    var text = PrometheusText()
    // Every task and source of the config has its series from the start,
    // so a rate over a fresh daemon is 0, not absent.
    var launches = c.launches
    for task in config.tasks where !launches.keys.contains(where: { $0.a == task.id }) {
      launches[Pair(a: task.id, b: RunOutcome.completed.rawValue)] = 0
    }
    var pages = c.pages, records = c.records
    for source in config.sources {
      for kind in ["fetched", "not_modified", "fresh", "failed"] { pages[Pair(a: source.name, b: kind), default: 0] += 0 }
      for kind in ["new", "changed", "removed"] { records[Pair(a: source.name, b: kind), default: 0] += 0 }
    }
    text.family(
      "forage_launches_total", .counter, "Launches this daemon ran, by task and outcome.",
      launches.sorted { ($0.key.a, $0.key.b) < ($1.key.a, $1.key.b) }.map {
        ([("task", $0.key.a), ("outcome", $0.key.b)], Double($0.value))
      })
    text.family(
      "forage_pages_total", .counter,
      "Pages this daemon's launches handled, by source and result (fetched, not_modified, fresh, failed).",
      pages.sorted { ($0.key.a, $0.key.b) < ($1.key.a, $1.key.b) }.map {
        ([("source", $0.key.a), ("result", $0.key.b)], Double($0.value))
      })
    text.family(
      "forage_records_total", .counter, "Records this daemon's launches found new, changed or removed, by source.",
      records.sorted { ($0.key.a, $0.key.b) < ($1.key.a, $1.key.b) }.map {
        ([("source", $0.key.a), ("change", $0.key.b)], Double($0.value))
      })
    text.family(
      "forage_source_data_age_seconds", .gauge,
      "Seconds since a launch last saw any record of the source (absent before its first data).",
      status.sources.compactMap { s in
        s.newestData.map { ([("source", s.name)], max(0, status.at.timeIntervalSince($0))) }
      })
    text.family(
      "forage_source_records", .gauge, "Records the store holds for the source (removed ones excluded).",
      status.sources.map { ([("source", $0.name)], Double($0.records)) })
    let o = status.notifications
    text.family(
      "forage_notifications", .gauge, "Notifications in the store's outbox, by state.",
      [
        ([("state", "pending")], Double(o.pending)), ([("state", "retrying")], Double(o.retrying)),
        ([("state", "delivered")], Double(o.delivered)), ([("state", "dead")], Double(o.dead)),
      ])
    let d = status.downloads
    text.family(
      "forage_downloads", .gauge, "Background downloads in the store, by state.",
      [
        ([("state", "queued")], Double(d.queued)), ([("state", "running")], Double(d.running)),
        ([("state", "done")], Double(d.done)), ([("state", "failed")], Double(d.failed)),
      ])
    text.family(
      "forage_healthy", .gauge, "1 when nothing needs attention (the rules of forage status), else 0.",
      [([], status.attention.isEmpty ? 1 : 0)])
    return text.text
  }
}

/// Writes the Prometheus text exposition format: a `# HELP` and `# TYPE`
/// line per family, then its samples, label values escaped.
///
///     var text = PrometheusText()
///     text.family("forage_healthy", .gauge, "1 when healthy.", [([], 1)])
///
/// - SeeAlso: <https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format>
public struct PrometheusText: Sendable {
  /// A metric family's type.
  public enum Kind: String, Sendable {
    /// A total that only grows (a restart starts it again at zero).
    case counter
    /// A value that goes up and down.
    case gauge
  }

  /// The page so far.
  public private(set) var text = ""

  /// An empty page.
  public init() {}

  /// Appends a family: its help, type and samples (label pairs and value).
  public mutating func family(_ name: String, _ kind: Kind, _ help: String, _ samples: [([(String, String)], Double)]) {
    text += "# HELP \(name) \(PrometheusText.escapeHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    for (labels, value) in samples {
      text += name
      if !labels.isEmpty {
        text += "{" + labels.map { "\($0.0)=\"\(PrometheusText.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
      }
      text += " " + PrometheusText.number(value) + "\n"
    }
  }

  /// A label value with `\`, `"` and line feeds escaped.
  public static func escapeLabel(_ value: String) -> String {
    var out = ""
    for c in value.unicodeScalars {
      switch c {
      case "\\": out += "\\\\"
      case "\"": out += "\\\""
      case "\n": out += "\\n"
      default: out.unicodeScalars.append(c)
      }
    }
    return out
  }

  /// Help text with `\` and line feeds escaped.
  public static func escapeHelp(_ value: String) -> String {
    value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
  }

  /// A sample value: an integer without a fraction, else a decimal.
  static func number(_ value: Double) -> String {
    if value.isNaN { return "NaN" }
    if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(format: "%.3f", value)
  }
}
