import Foundation
import ForageScheduler
import ForageStore
import ForageSupport

/// A store as one self-contained HTML page (`forage report`): a timeline of
/// each task's launches, how old each source's data was over time (and, with
/// a config, the simulator's forecast), recent changes with their field
/// diffs, errors grouped by cause, pages and time per page per source, each
/// source's record count and field coverage per crawl with its episodes of
/// held changes, and the notification outbox.
///
///     let html = try await HTMLReport.render(store: store, config: config)
///     try html.write(toFile: "report.html", atomically: true, encoding: .utf8)
///
/// The page has inline CSS and inline SVG only: no script, no outside asset,
/// no web font, no link. It follows the reader's light or dark colour scheme
/// and fits a phone's width. Every scraped or stored text (titles, keys,
/// field names, URLs, error messages, task and source names) is escaped
/// (`& < > " '`) wherever it appears, so it always shows as text; none of it
/// goes into a `style`, a URL or an attribute.
package enum HTMLReport {
  /// What the report covers.
  package struct Options: Sendable {
    /// The longest span the launch timeline and the freshness charts cover,
    /// in days, ending now. A shorter history is shown over its own span.
    package var days: Double = 7
    /// The most recent changes listed.
    package var changes = 40
    /// The most launches drawn per source in the pages-per-launch chart.
    package var launchesPerSource = 30
    /// Simulated days of the freshness forecast (with a config).
    package var forecastDays: Double = 3
    /// The forecast's seed: the same seed gives the same forecast.
    package var seed: UInt64 = 1
    /// The device the forecast simulates.
    package var profile: DeviceProfile = .commuter
    /// The page's title and heading.
    package var title = "Forage report"
    /// A line under the heading (the store's path), shown as text.
    package var subtitle: String?

    /// The defaults: a week of history, a three-day forecast on the commuter profile.
    package init() {}
  }

  /// Reads `store` and renders the report.
  ///
  /// - Parameters:
  ///   - config: with a config, its tasks and sources are listed even before
  ///     they ran, and the freshness forecast is simulated (model durations
  ///     from the store's recorded runs; nothing is fetched or written).
  ///   - now: the report's "now": the end of the timeline, the ages' reference.
  /// - Returns: the whole HTML document.
  /// - Throws: store errors.
  package static func render(
    store: any Store, config: ForageConfig? = nil, now: Date = Date(), options: Options = Options()
  ) async throws -> String {
    let status = try await StoreStatus.gather(store: store, config: config, now: now, launches: 500)
    let runs = try await store.runs(limit: 500)
    let changes = try await store.changes(matching: ChangeQuery(limit: max(0, options.changes)))
    let dead = status.notifications.dead > 0 ? try await store.notifications(state: .dead, limit: 20) : []
    let pending = status.notifications.pending > 0 ? try await store.notifications(state: .pending, limit: 20) : []
    var crawlHealth: [String: [CrawlHealth]] = [:]
    for source in status.sources {
      crawlHealth[source.name] = try await store.crawlHealth(source: source.name, limit: options.launchesPerSource)
    }
    let episodes = try await store.healthEpisodes(limit: 200)
    let forecast: Forecast
    if let config {
      if config.tasks.isEmpty {
        forecast = .noTasks
      } else {
        forecast = .result(
          try await Engine.simulate(
            config: config, store: store, profile: options.profile, days: options.forecastDays, seed: options.seed))
      }
    } else {
      forecast = .noConfig
    }
    let report = Report(
      options: options, now: now, status: status, runs: runs, changes: changes, dead: dead, pending: pending,
      forecast: forecast, crawlHealth: crawlHealth, episodes: episodes)
    return report.html()
  }

  /// The simulator's part of the report.
  enum Forecast {
    /// No `--config`: nothing to simulate.
    case noConfig
    /// The config has no tasks: the simulator schedules tasks, so there is no forecast.
    case noTasks
    case result(SimulationResult)
  }
}

/// Everything the page is made from, and the page.
struct Report {
  var options: HTMLReport.Options
  var now: Date
  var status: StoreStatus
  /// Newest first.
  var runs: [TaskRun]
  /// Newest first.
  var changes: [RecordChange]
  var dead: [OutboxNotification]
  var pending: [OutboxNotification]
  var forecast: HTMLReport.Forecast
  /// Per source, its last crawls' health, newest first.
  var crawlHealth: [String: [CrawlHealth]] = [:]
  /// Health episodes, open ones first.
  var episodes: [HealthEpisode] = []

  /// The span the timeline and freshness charts cover: from the oldest
  /// launch within `days` (a little before it) to now, at least a minute.
  var window: (start: Date, seconds: Double) {
    let longest = max(60, options.days * 86_400)
    let oldest = runs.map(\.startedAt).filter { now.timeIntervalSince($0) <= longest }.min()
    let span = oldest.map { now.timeIntervalSince($0) } ?? 3600
    let seconds = min(longest, max(60, span * 1.05 + 1))
    return (now.addingTimeInterval(-seconds), seconds)
  }

  func html() -> String {
    var h = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <meta name="color-scheme" content="light dark">
      <meta name="referrer" content="no-referrer">
      <title>\(esc(options.title))</title>
      <style>\(Report.css)</style>
      </head>
      <body>
      <main class="wrap">

      """
    h += header()
    h += launchesSection()
    h += freshnessSection()
    h += pagesSection()
    h += healthSection()
    h += changesSection()
    h += errorsSection()
    h += outboxSection()
    h += "<footer><p>Made by forage report at \(esc(dateText(now))). "
    h += "Self-contained: no script, no outside files. Times are UTC.</p></footer>\n"
    h += "</main>\n</body>\n</html>\n"
    return h
  }

  func header() -> String {
    var h = "<header>\n<h1>\(esc(options.title))</h1>\n"
    if let subtitle = options.subtitle { h += "<p class=\"muted\">\(esc(subtitle))</p>\n" }
    h += "<p class=\"muted\">As of <time>\(esc(dateText(now)))</time></p>\n"
    let launches = runs.filter { $0.startedAt >= window.start }.count
    let records = status.sources.reduce(0) { $0 + $1.records }
    let o = status.notifications
    h += "<div class=\"cards\">\n"
    h += card("Tasks", "\(status.tasks.count)")
    h += card("Launches shown", "\(launches)")
    h += card("Sources", "\(status.sources.count)")
    h += card("Records", "\(records)")
    h += card("Changes, last day", "\(status.sources.reduce(0) { $0 + $1.changesLastDay })")
    h += card("Dead notifications", "\(o.dead)", bad: o.dead > 0)
    h += "</div>\n"
    if status.attention.isEmpty {
      h += "<p class=\"healthy\">Healthy: nothing needs attention.</p>\n"
    } else {
      h += "<section class=\"attention\"><h2>Needs attention</h2>\n<ul>\n"
      for a in status.attention { h += "<li>\(esc(a))</li>\n" }
      h += "</ul></section>\n"
    }
    return h + "</header>\n"
  }

  func card(_ label: String, _ value: String, bad: Bool = false) -> String {
    "<div class=\"card\(bad ? " bad" : "")\"><div class=\"num\">\(esc(value))</div>"
      + "<div class=\"muted\">\(esc(label))</div></div>\n"
  }
}

// MARK: Text

/// Escapes `& < > " '` so `text` shows as itself in HTML or SVG text and in
/// a double- or single-quoted attribute; control characters other than tab
/// and newline, which HTML text may not hold, show as the replacement
/// character.
func esc(_ text: String) -> String { MarkupText.escaped(text, quotes: .both, replacingControls: true) }

/// `2026-12-01 09:14:03Z`.
func dateText(_ date: Date) -> String { ISODate.string(date).replacingOccurrences(of: "T", with: " ") }

/// An age or duration in seconds, compactly: `45s`, `12m`, `3.5h`, `2.1d`.
func ageText(_ seconds: Double) -> String {
  let s = seconds.isFinite ? max(0, seconds) : 0
  switch s {
  case ..<1: return "\(Int((s * 1000).rounded()))ms"
  case ..<60: return String(format1: s) + "s"
  case ..<3600: return "\(Int(s / 60))m"
  case ..<172_800: return String(format1: s / 3600) + "h"
  default: return String(format1: s / 86_400) + "d"
  }
}

/// A coordinate for an SVG attribute: finite, two decimals at most.
func coord(_ v: Double) -> String {
  guard v.isFinite else { return "0" }
  return String((v * 100).rounded() / 100)
}
