import Foundation
import ForageScheduler
import ForageStore

/// The report's charts: launches per task, freshness per source (observed and
/// forecast), pages per launch and time per page.
extension Report {
  /// The CSS class of a launch outcome (a fixed name, never stored text).
  static func outcomeClass(_ outcome: String) -> String {
    switch outcome {
    case "completed": return "o-completed"
    case "budget": return "o-budget"
    case "interrupted": return "o-interrupted"
    case "failed": return "o-failed"
    default: return "o-unfinished"
    }
  }

  /// How a person reads an outcome.
  static func outcomeLabel(_ outcome: String) -> String {
    switch outcome {
    case "completed": return "completed"
    case "budget": return "stopped by budget"
    case "interrupted": return "interrupted"
    case "failed": return "failed"
    default: return "unfinished"
    }
  }

  static let outcomeOrder = ["completed", "budget", "interrupted", "failed", "unfinished"]

  /// A launch's device conditions in words: `charging · wifi`,
  /// `battery 54% · cellular · Low Power Mode`.
  static func conditionsText(_ c: DeviceConditions) -> String {
    var parts = [c.isCharging ? "charging" : "battery \(Int((c.batteryLevel * 100).rounded()))%", c.network.description]
    if c.isLowPowerModeEnabled { parts.append("Low Power Mode") }
    if c.thermalState != .nominal { parts.append("thermal \(c.thermalState.rawValue)") }
    return parts.joined(separator: " · ")
  }

  /// Where `date` falls on a chart `width` wide covering the window.
  func x(_ date: Date, width: Double = 1000) -> Double {
    let (start, seconds) = window
    return min(width, max(0, date.timeIntervalSince(start) / seconds * width))
  }

  func axis() -> String {
    let (start, seconds) = window
    let middle = start.addingTimeInterval(seconds / 2)
    return "<div class=\"axis\"><span>\(esc(dateText(start)))</span><span class=\"wide\">\(esc(dateText(middle)))</span>"
      + "<span>now</span></div>\n"
  }

  // MARK: Launches

  func launchesSection() -> String {
    let (start, seconds) = window
    var h = "<section id=\"launches\">\n<h2>Launches</h2>\n"
    h += "<p class=\"muted\">Each task's launches over the last \(esc(ageText(seconds))): a bar runs from a launch's "
    h += "start to its end; hover or tap a bar for its figures, or open the list.</p>\n"
    h += "<p class=\"legend\">"
    for outcome in Report.outcomeOrder {
      h += "<span><i class=\"sw \(Report.outcomeClass(outcome))\"></i>\(Report.outcomeLabel(outcome))</span> "
    }
    h += "<span>power at launch: <i class=\"sw c-charging\"></i>charging</span> "
    h += "<span><i class=\"sw c-battery\"></i>on battery</span> "
    h += "<span><i class=\"sw c-lowpower\"></i>Low Power Mode</span> "
    h += "<span><i class=\"sw sw-gap\"></i>not recorded</span></p>\n"
    if status.tasks.isEmpty { h += "<p>No task has run yet.</p>\n" }
    for task in status.tasks {
      let shown = task.launches.filter { l in
        (l.seconds.map { l.startedAt.addingTimeInterval($0) } ?? now) >= start
      }
      var counts: [String: Int] = [:]
      for l in shown { counts[l.outcome == "running" ? "unfinished" : l.outcome, default: 0] += 1 }
      let tally = Report.outcomeOrder.compactMap { o in counts[o].map { "\($0) \(Report.outcomeLabel(o))" } }
      h += "<div class=\"row\">\n<div class=\"label\"><b class=\"name\">\(esc(task.id))</b>"
      h += "<div class=\"muted\">\(shown.isEmpty ? "no launches in this span" : esc(tally.joined(separator: ", ")))"
      if task.pending {
        let next = task.earliestBegin.map { $0 > now ? "not before " + dateText($0) : "due now" } ?? "as soon as possible"
        h += "<br>next launch: \(esc(next))"
      }
      h += "</div></div>\n<div>\n"
      h += "<svg class=\"strip\" viewBox=\"0 0 1000 20\" preserveAspectRatio=\"none\" role=\"img\" "
      h += "aria-label=\"launches of \(esc(task.id))\"><rect class=\"lane\" x=\"0\" y=\"0\" width=\"1000\" height=\"20\"/>"
      for l in shown.reversed() {
        let end = l.seconds.map { l.startedAt.addingTimeInterval($0) } ?? l.startedAt
        let x0 = x(l.startedAt)
        let width = max(4, x(end) - x0)
        h += "<rect class=\"\(Report.outcomeClass(l.outcome))\" x=\"\(coord(min(x0, 996)))\" y=\"2\" "
        h += "width=\"\(coord(width))\" height=\"16\"><title>\(esc(launchTitle(l)))</title></rect>"
      }
      h += "</svg>\n"
      if shown.contains(where: { $0.conditions != nil }) {
        // The device's state as each launch began: its power, in colour;
        // network and the rest in the marker's title.
        h += "<svg class=\"cond\" viewBox=\"0 0 1000 8\" preserveAspectRatio=\"none\" role=\"img\" "
        h += "aria-label=\"device conditions at each launch of \(esc(task.id))\">"
        for l in shown.reversed() {
          guard let c = l.conditions else { continue }
          let kind = c.isLowPowerModeEnabled ? "c-lowpower" : c.isCharging ? "c-charging" : "c-battery"
          h += "<rect class=\"\(kind)\" x=\"\(coord(min(x(l.startedAt), 996)))\" y=\"0\" width=\"4\" height=\"8\">"
          h += "<title>\(esc(Report.conditionsText(c)))</title></rect>"
        }
        h += "</svg>\n"
      } else {
        h += "<div class=\"gap\">Device conditions at each launch: not recorded (the daemon and the simulator "
        h += "record them; forage run does not)</div>\n"
      }
      h += axis()
      if !shown.isEmpty {
        h += "<details><summary>\(shown.count) launch\(shown.count == 1 ? "" : "es")</summary>\n"
        h += "<div class=\"scroll\"><table><thead><tr><th>Launch</th><th>Started</th><th>Outcome</th>"
        h += "<th class=\"n\">Time</th><th class=\"n\">Pages</th><th class=\"n\">Failed</th>"
        h += "<th class=\"n\">Delivered</th><th>Device</th></tr></thead><tbody>\n"
        for l in shown.prefix(100) {
          h += "<tr><td>#\(l.id)</td><td>\(esc(dateText(l.startedAt)))</td>"
          h += "<td><i class=\"sw \(Report.outcomeClass(l.outcome))\"></i>\(Report.outcomeLabel(l.outcome))</td>"
          h += "<td class=\"n\">\(esc(l.seconds.map(ageText) ?? "–"))</td><td class=\"n\">\(l.pagesFetched)</td>"
          h += "<td class=\"n\">\(l.pagesFailed)</td><td class=\"n\">\(l.notificationsDelivered)</td>"
          h += "<td>\(esc(l.conditions.map(Report.conditionsText) ?? "–"))</td></tr>\n"
        }
        h += "</tbody></table></div></details>\n"
      }
      h += "</div>\n</div>\n"
    }
    return h + "</section>\n"
  }

  func launchTitle(_ l: StoreStatus.Launch) -> String {
    var t = "#\(l.id) \(dateText(l.startedAt)): \(Report.outcomeLabel(l.outcome))"
    if let s = l.seconds { t += ", \(ageText(s))" }
    return t + ", \(l.pagesFetched) pages, \(l.pagesFailed) failed"
  }

  // MARK: Freshness

  /// A source's data age over the window: it rises with time and drops when
  /// a launch that completed the source's crawl ends, to the time since that
  /// launch's start (its oldest page is at most that old).
  struct FreshnessSeries {
    /// (time, age in seconds), in time order; empty when no completed crawl
    /// is known up to now.
    var points: [(at: Date, age: Double)] = []
    /// Completed crawls that ended in the window.
    var refreshes = 0
    /// The start of the newest completed crawl.
    var lastRefresh: Date?

    var worst: Double? { points.map(\.age).max() }
  }

  func freshness(_ source: String) -> FreshnessSeries {
    let start = window.start
    let done = runs.compactMap { run -> (finish: Date, start: Date)? in
      // Refreshed: the crawl completed with at least one page answered (a
      // crawl whose every page failed completes too, with nothing new).
      guard let s = run.summary, let finished = s.finishedAt,
        let part = s.sources.first(where: { $0.name == source }), part.completed || s.completedSources.contains(source),
        part.pagesFetched + part.pagesNotModified + part.pagesFresh > 0
      else { return nil }
      return (min(finished, now), min(run.startedAt, now))
    }.sorted { $0.finish < $1.finish }
    var series = FreshnessSeries()
    var refreshed: Date?
    var i = 0
    while i < done.count && done[i].finish <= start {
      refreshed = max(refreshed ?? done[i].start, done[i].start)
      i += 1
    }
    if let r = refreshed { series.points.append((start, start.timeIntervalSince(r))) }
    for d in done[i...] {
      if let r = refreshed { series.points.append((d.finish, d.finish.timeIntervalSince(r))) }
      let r = max(refreshed ?? d.start, d.start)
      refreshed = r
      series.points.append((d.finish, d.finish.timeIntervalSince(r)))
      series.refreshes += 1
    }
    if let r = refreshed { series.points.append((now, now.timeIntervalSince(r))) }
    series.lastRefresh = refreshed
    return series
  }

  func freshnessSection() -> String {
    var h = "<section id=\"freshness\">\n<h2>Freshness</h2>\n"
    h += "<p class=\"muted\">How old each source's data was over the same span: the time since the start of the newest "
    h += "launch that completed its crawl with pages answered. It rises until the next such launch ends. A source "
    h += "with no such crawl has no line.</p>\n"
    if status.sources.isEmpty { h += "<p>No sources yet.</p>\n" }
    for source in status.sources {
      let series = freshness(source.name)
      var facts: [String] = []
      if let last = series.lastRefresh {
        facts.append("now \(ageText(now.timeIntervalSince(last))) old")
        if let worst = series.worst { facts.append("oldest \(ageText(worst))") }
        facts.append("\(series.refreshes) completed crawl\(series.refreshes == 1 ? "" : "s") in this span")
      } else {
        facts.append("no crawl completed with pages answered")
        if let seen = source.newestData { facts.append("newest data seen \(ageText(now.timeIntervalSince(seen))) ago") }
      }
      h += "<div class=\"row\">\n<div class=\"label\"><b class=\"name\">\(esc(source.name))</b>"
      h += "<div class=\"muted\">\(esc(facts.joined(separator: ", ")))</div></div>\n<div>\n"
      let top = max(1, series.worst ?? 1)
      h += "<div class=\"scale\">\(series.points.isEmpty ? "" : "top: " + esc(ageText(top)))</div>"
      h += "<svg class=\"chart\" viewBox=\"0 0 1000 100\" preserveAspectRatio=\"none\" role=\"img\" "
      h += "aria-label=\"data age of \(esc(source.name))\"><rect class=\"lane\" x=\"0\" y=\"0\" width=\"1000\" height=\"100\"/>"
      if !series.points.isEmpty {
        let pts = series.points.map { "\(coord(x($0.at))),\(coord(98 - $0.age / top * 92))" }
        let first = coord(x(series.points[0].at))
        let last = coord(x(series.points[series.points.count - 1].at))
        h += "<polygon class=\"age-area\" points=\"\(first),100 \(pts.joined(separator: " ")) \(last),100\"/>"
        h += "<polyline class=\"age\" vector-effect=\"non-scaling-stroke\" points=\"\(pts.joined(separator: " "))\"/>"
      }
      h += "</svg>\n" + axis() + "</div>\n</div>\n"
    }
    h += forecastPart()
    return h + "</section>\n"
  }

  func forecastPart() -> String {
    var h = "<h3>Forecast</h3>\n"
    let result: SimulationResult
    switch forecast {
    case .noConfig:
      return h + "<p class=\"muted\">No forecast: give --config FILE to simulate the config's tasks on a device.</p>\n"
    case .noTasks:
      return h + "<p class=\"note\">No forecast: the config has no tasks. The simulator forecasts freshness by "
        + "scheduling the config's background tasks on a simulated device; add a \"tasks\" array to get one.</p>\n"
    case .result(let r): result = r
    }
    let f = result.forecast
    h += "<p class=\"muted\">\(esc(String(format1: f.days))) simulated days on the \(esc(result.profile)) profile, "
    h += "seed \(result.seed), launch durations from the recorded runs (or the defaults): the age of each source's "
    h += "data at each of \(f.sampledHourly ? "the hourly samples" : "\(f.appOpens) app opens"). "
    h += "Bars: median (dark), 95th percentile, worst (light).</p>\n"
    let top = max(1, f.sources.compactMap(\.worstAge).max() ?? 1)
    h += "<div class=\"scroll\"><table><thead><tr><th>Source</th><th>Age at open</th><th class=\"n\">Median</th>"
    h += "<th class=\"n\">95th</th><th class=\"n\">Worst</th><th class=\"n\">Fresh &lt; \(esc(ageText(f.freshWithin)))</th>"
    h += "<th class=\"n\">Refreshes</th><th class=\"n\">Failed</th></tr></thead><tbody>\n"
    for s in f.sources {
      h += "<tr><td class=\"name\">\(esc(s.source))</td><td class=\"barcell\">"
      h += "<svg class=\"bar\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" aria-hidden=\"true\">"
      for (value, cls) in [(s.worstAge, "f-worst"), (s.p95Age, "f-p95"), (s.medianAge, "f-median")] {
        if let value { h += "<rect class=\"\(cls)\" x=\"0\" y=\"1\" width=\"\(coord(value / top * 100))\" height=\"8\"/>" }
      }
      h += "</svg></td>"
      for value in [s.medianAge, s.p95Age, s.worstAge] { h += "<td class=\"n\">\(esc(value.map(ageText) ?? "–"))</td>" }
      h += "<td class=\"n\">\(esc(s.freshShare.map { String(format1: $0 * 100) + "%" } ?? "–"))</td>"
      h += "<td class=\"n\">\(s.refreshes)</td><td class=\"n\">\(s.failures)</td></tr>\n"
    }
    h += "</tbody></table></div>\n"
    h += "<div class=\"scroll\"><table><thead><tr><th>Task</th><th class=\"n\">Launches</th><th class=\"n\">Succeeded</th>"
    h += "<th class=\"n\">Expired</th><th class=\"n\">Killed</th><th class=\"n\">Median run</th></tr></thead><tbody>\n"
    for t in f.tasks {
      h += "<tr><td class=\"name\">\(esc(t.identifier))</td><td class=\"n\">\(t.launches)</td>"
      h += "<td class=\"n\">\(t.succeeded)</td><td class=\"n\">\(t.expirations)</td><td class=\"n\">\(t.kills)</td>"
      h += "<td class=\"n\">\(esc(t.medianDuration.map(ageText) ?? "–"))</td></tr>\n"
    }
    h += "</tbody></table></div>\n"
    if !f.notes.isEmpty {
      h += "<ul class=\"notes\">\n"
      for note in f.notes { h += "<li>\(esc(note))</li>\n" }
      h += "</ul>\n"
    }
    return h
  }

  // MARK: Pages and time per page

  /// One source's part of one launch.
  struct SourceLaunch {
    var run: Int64
    var startedAt: Date
    var answered: Int
    var failed: Int
    /// The launch's time divided by all its pages (per-source times are not recorded).
    var secondsPerPage: Double?
  }

  /// The source's last launches, oldest first.
  func launches(of source: String) -> [SourceLaunch] {
    let mine = runs.compactMap { run -> SourceLaunch? in
      guard let summary = run.summary, let s = summary.sources.first(where: { $0.name == source }) else { return nil }
      let all = summary.pages
      return SourceLaunch(
        run: run.id, startedAt: run.startedAt, answered: s.pagesFetched + s.pagesNotModified + s.pagesFresh,
        failed: s.pagesFailed,
        secondsPerPage: all > 0 && s.pages > 0 && summary.seconds > 0 ? summary.seconds / Double(all) : nil)
    }
    return Array(mine.prefix(max(1, options.launchesPerSource)).reversed())
  }

  static func median(_ values: [Double]) -> Double? {
    guard !values.isEmpty else { return nil }
    let sorted = values.sorted()
    return sorted.count % 2 == 1
      ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
  }

  func pagesSection() -> String {
    var h = "<section id=\"pages\">\n<h2>Pages per launch</h2>\n"
    h += "<p class=\"muted\">Each source's pages in its last launches, oldest first: answered pages (fetched, not "
    h += "modified or still fresh), failed ones on top.</p>\n"
    var perPage: [(name: String, seconds: Double)] = []
    for source in status.sources {
      let list = launches(of: source.name)
      if let m = Report.median(list.compactMap(\.secondsPerPage)) { perPage.append((source.name, m)) }
      let median = Report.median(list.map { Double($0.answered) })
      var facts = list.isEmpty ? "no launches yet" : "\(list.count) launch\(list.count == 1 ? "" : "es")"
      if let median { facts += ", median \(String(format1: median)) pages" }
      if let last = list.last { facts += ", last: \(last.answered) pages, \(last.failed) failed" }
      h += "<div class=\"row\">\n<div class=\"label\"><b class=\"name\">\(esc(source.name))</b>"
      h += "<div class=\"muted\">\(esc(facts))</div></div>\n<div>\n"
      let top = Double(max(1, list.map { $0.answered + $0.failed }.max() ?? 1))
      let slot = 1000 / Double(max(options.launchesPerSource, list.count, 1))
      h += "<svg class=\"chart short\" viewBox=\"0 0 1000 60\" preserveAspectRatio=\"none\" role=\"img\" "
      h += "aria-label=\"pages per launch of \(esc(source.name))\"><rect class=\"lane\" x=\"0\" y=\"0\" width=\"1000\" height=\"60\"/>"
      for (i, l) in list.enumerated() {
        let x0 = Double(i) * slot + slot * 0.1
        let w = slot * 0.8
        let okHeight = Double(l.answered) / top * 58
        let failHeight = Double(l.failed) / top * 58
        let title = "#\(l.run) \(dateText(l.startedAt)): \(l.answered) pages, \(l.failed) failed"
        h += "<g><title>\(esc(title))</title>"
        h += "<rect class=\"p-ok\" x=\"\(coord(x0))\" y=\"\(coord(60 - okHeight))\" width=\"\(coord(w))\" height=\"\(coord(okHeight))\"/>"
        if l.failed > 0 {
          h += "<rect class=\"p-failed\" x=\"\(coord(x0))\" y=\"\(coord(60 - okHeight - failHeight))\" "
          h += "width=\"\(coord(w))\" height=\"\(coord(failHeight))\"/>"
        }
        h += "</g>"
      }
      h += "</svg>\n</div>\n</div>\n"
    }
    h += "<h3>Time per page</h3>\n"
    h += "<p class=\"muted\">Median over each source's last launches of the launch's time divided by its pages. "
    h += "Per-source times are not recorded: sources that always run in the same launch show the same figure.</p>\n"
    if perPage.isEmpty {
      h += "<p>No launch with pages yet.</p>\n"
    } else {
      let top = max(0.001, perPage.map(\.seconds).max() ?? 0.001)
      // The slowest source stands out when it takes at least twice as long
      // a page as the fastest.
      let fastest = perPage.map(\.seconds).min() ?? 0
      let slowest = perPage.max { $0.seconds < $1.seconds }.flatMap { $0.seconds >= 2 * fastest ? $0.name : nil }
      h += "<div class=\"bars\">\n"
      for p in perPage {
        let slow = p.name == slowest
        h += "<div class=\"barrow\(slow ? " slow" : "")\"><span class=\"name\">\(esc(p.name))</span>"
        h += "<svg class=\"bar\" viewBox=\"0 0 100 10\" preserveAspectRatio=\"none\" aria-hidden=\"true\">"
        h += "<rect class=\"\(slow ? "t-slow" : "t-page")\" x=\"0\" y=\"1\" width=\"\(coord(max(0.5, p.seconds / top * 100)))\" height=\"8\"/></svg>"
        h += "<span class=\"n\">\(esc(ageText(p.seconds))) per page\(slow ? " <b class=\"badge bad\">slowest</b>" : "")</span></div>\n"
      }
      h += "</div>\n"
    }
    return h + "</section>\n"
  }
}
