import Foundation

/// How fresh each source's data is when the user opens the app, computed from
/// a scheduler's ``Trace``: for every app open, the age of each source's data
/// (the time since a launch serving it last completed successfully), summed
/// up as median, 95th percentile and worst; plus per-task launch counts and
/// plain-language notes on what went wrong.
///
///     let forecast = FreshnessForecast(
///       trace: scheduler.trace,
///       sources: ["com.example.refresh": ["prices", "news"], "com.example.crawl": ["catalog"]])
///     print(forecast)           // a table a person can read
///     let json = try JSONEncoder().encode(forecast)
///
/// A source counts as refreshed by a launch that completed successfully, or by
/// any completed launch that reported it (``BackgroundTask/reportRefreshed(sources:)``,
/// or a model-mode launch cut short after reaching it). Before its first
/// refresh, a source's age counts from the start of the trace. With no app
/// opens in the trace (a server), ages are sampled every hour instead.
///
/// With `refreshOnOpen` (the app fetches in the foreground when opened),
/// each open also counts as a refresh of every source, after its age is
/// measured: the age at an open is what the user sees before that fetch
/// lands, the time since the later of the last background refresh and the
/// previous open.
public struct FreshnessForecast: Codable, Sendable, CustomStringConvertible {
  /// The ages of one source's data at the moments the user looked.
  public struct SourceFreshness: Codable, Sendable, Hashable {
    /// The source's name.
    public var source: String
    /// The tasks serving this source.
    public var tasks: [String]
    /// How many times the source was refreshed.
    public var refreshes: Int
    /// Launches serving the source that ended without refreshing it (failed,
    /// cut short before reaching it, or killed): its data kept ageing.
    public var failures: Int
    /// How many ages were measured (app opens, or hourly samples).
    public var samples: Int
    /// Ages in seconds.
    public var medianAge: Double?
    /// 95th percentile (nearest rank).
    public var p95Age: Double?
    /// The oldest data seen.
    public var worstAge: Double?
    /// The share of samples with data younger than ``FreshnessForecast/freshWithin``.
    public var freshShare: Double?
    /// Samples taken before the source had ever been refreshed.
    public var samplesNeverRefreshed: Int
  }

  /// What happened to one task.
  public struct TaskSummary: Codable, Sendable, Hashable {
    /// The task identifier.
    public var identifier: String
    /// Requests accepted.
    public var submitted: Int
    /// Submissions that failed.
    public var rejected: Int
    /// Launches.
    public var launches: Int
    /// Launches completed with success.
    public var succeeded: Int
    /// Launches completed with failure.
    public var failed: Int
    /// Launches that expired.
    public var expirations: Int
    /// Launches killed, for any reason (ignoring expiration, the CPU monitor).
    public var kills: Int
    /// Of ``kills``, those by the CPU monitor (heavy CPU in the background).
    public var cpuKills: Int
    /// Median run time of completed launches, in seconds.
    public var medianDuration: Double?
    /// The reason the task was held back most often, if any.
    public var mostCommonDeferral: DeferralReason?
    /// The error most submissions failed with, if any.
    public var mostCommonRejection: String?
  }

  /// The simulated span in days.
  public var days: Double
  /// App opens in the trace.
  public var appOpens: Int
  /// True when ages were sampled hourly because the trace has no app opens.
  public var sampledHourly: Bool
  /// The threshold for ``SourceFreshness/freshShare``, in seconds.
  public var freshWithin: Double
  /// True when every app open counted as a foreground refresh of every source.
  public var refreshOnOpen: Bool
  /// Per source, by name.
  public var sources: [SourceFreshness]
  /// Per task, by identifier.
  public var tasks: [TaskSummary]
  /// Plain-language findings: tasks that never ran and why, kills, overruns.
  public var notes: [String]
  /// The same findings as ``notes``, each with what it is about, so that
  /// several seeds' findings can be told apart and counted
  /// (``ForecastDistribution``).
  public var findings: [Finding]

  /// One finding: a topic (`neverRan`, `kills`, `cpuKills`, `expirations`,
  /// `rejections`, `heldBack`, `criticalBattery`, `dataBudget`,
  /// `sourceFailures`, `neverRefreshed`, `sampledHourly`), the task or
  /// source it is about, and the sentence.
  public struct Finding: Codable, Sendable, Hashable {
    /// The kind of finding, one of the topics above.
    public var topic: String
    /// The task identifier or source name; empty for the whole run.
    public var subject: String
    /// The sentence for the user, with its figures.
    public var text: String
  }

  /// Computes the forecast.
  ///
  /// - Parameters:
  ///   - trace: a scheduler's trace.
  ///   - sources: for each task identifier, the sources it serves.
  ///   - freshWithin: the age under which data counts as fresh (default one hour).
  ///   - refreshOnOpen: the app fetches every source in the foreground when
  ///     the user opens it, so each open refreshes them after its age is measured.
  public init(
    trace: Trace, sources taskSources: [String: [String]], freshWithin: Duration = .seconds(3600),
    refreshOnOpen: Bool = false
  ) {
    let start = trace.start.timeIntervalSince1970
    let end = max(trace.end.timeIntervalSince1970, trace.events.last?.time.timeIntervalSince1970 ?? start)
    days = (end - start) / 86_400
    self.freshWithin = freshWithin.seconds

    var servedBy: [String: [String]] = [:]
    for task in taskSources.keys.sorted() {
      for source in taskSources[task]! { servedBy[source, default: []].append(task) }
    }
    let sourceNames = servedBy.keys.sorted()

    var opens = trace.events.filter { $0.kind == .appOpened }.map { $0.time.timeIntervalSince1970 }
    sampledHourly = opens.isEmpty
    if opens.isEmpty { opens = Array(stride(from: start + 3600, through: end, by: 3600)) }
    appOpens = sampledHourly ? 0 : opens.count
    // Hourly samples are no app opens, so they refresh nothing.
    self.refreshOnOpen = refreshOnOpen && !sampledHourly
    let opensRefresh = self.refreshOnOpen

    // Refresh instants per source, in order, and the launches that ended
    // without refreshing a source they serve.
    var refreshTimes: [String: [Double]] = [:]
    var failures: [String: Int] = [:]
    for e in trace.events where e.kind == .completed || e.kind == .killed {
      guard let id = e.identifier else { continue }
      let refreshed: [String]
      if let reported = e.refreshedSources, e.kind == .completed {
        refreshed = reported
      } else if e.success == true {
        refreshed = taskSources[id] ?? []
      } else {
        refreshed = []
      }
      for s in refreshed { refreshTimes[s, default: []].append(e.time.timeIntervalSince1970) }
      for s in taskSources[id] ?? [] where !refreshed.contains(s) { failures[s, default: 0] += 1 }
    }

    var sourceRows: [SourceFreshness] = []
    for source in sourceNames {
      let times = refreshTimes[source] ?? []
      var ages: [Double] = []
      var never = 0
      var i = 0
      var last: Double?
      for open in opens {
        while i < times.count && times[i] <= open {
          last = times[i]
          i += 1
        }
        if last == nil { never += 1 }
        ages.append(open - (last ?? start))
        if opensRefresh { last = open }  // the foreground fetch, after the user saw the old data
      }
      ages.sort()
      let fresh = ages.isEmpty ? nil : Double(ages.filter { $0 < freshWithin.seconds }.count) / Double(ages.count)
      sourceRows.append(SourceFreshness(
        source: source, tasks: servedBy[source] ?? [], refreshes: times.count, failures: failures[source] ?? 0,
        samples: ages.count,
        medianAge: FreshnessForecast.percentile(ages, 0.5), p95Age: FreshnessForecast.percentile(ages, 0.95),
        worstAge: ages.last, freshShare: fresh, samplesNeverRefreshed: never))
    }
    self.sources = sourceRows

    var ids = Set(taskSources.keys)
    for e in trace.events { if let id = e.identifier { ids.insert(id) } }
    var rows: [TaskSummary] = []
    for id in ids.sorted() {
      let events = trace.events(for: id)
      func count(_ k: TraceEvent.Kind) -> Int { events.reduce(0) { $0 + ($1.kind == k ? 1 : 0) } }
      let durations = events.filter { $0.kind == .completed }.compactMap(\.duration).sorted()
      let deferrals = trace.deferrals.filter { $0.identifier == id }
      let topDeferral = deferrals.max { $0.count != $1.count ? $0.count < $1.count : $0.reason > $1.reason }?.reason
      var rejections: [String: Int] = [:]
      for e in events where e.kind == .rejected { rejections[e.reason ?? "error", default: 0] += 1 }
      let topRejection = rejections.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }?.key
      rows.append(TaskSummary(
        identifier: id, submitted: count(.submitted), rejected: count(.rejected), launches: count(.launched),
        succeeded: events.filter { $0.kind == .completed && $0.success == true }.count,
        failed: events.filter { $0.kind == .completed && $0.success == false }.count,
        expirations: count(.expired), kills: count(.killed),
        cpuKills: events.reduce(0) { $0 + ($1.killReason == .cpuMonitor ? 1 : 0) },
        medianDuration: FreshnessForecast.percentile(durations, 0.5),
        mostCommonDeferral: topDeferral, mostCommonRejection: topRejection))
    }
    self.tasks = rows

    var findings: [Finding] = []
    func note(_ topic: String, _ subject: String, _ text: String) {
      findings.append(Finding(topic: topic, subject: subject, text: text))
    }
    for t in rows {
      if t.launches == 0 {
        if t.submitted == 0 && t.rejected > 0 {
          let why = t.mostCommonRejection == "unavailable"
            ? "every submission failed: Background App Refresh is off (Settings > General > Background App Refresh)"
            : "every submission failed (\(t.mostCommonRejection ?? "error"))"
          note("neverRan", t.identifier, "\(t.identifier) never ran: \(why).")
        } else if t.submitted == 0 {
          note("neverRan", t.identifier, "\(t.identifier) never ran: no request was submitted (submit one at launch, when entering the background, or from the handler).")
        } else if let reason = t.mostCommonDeferral {
          note("neverRan", t.identifier, "\(t.identifier) never ran: \(reason.explanation).")
        } else {
          note("neverRan", t.identifier, "\(t.identifier) never ran: its requests never became due within the run.")
        }
        continue
      }
      let ignored = t.kills - t.cpuKills
      if ignored > 0 {
        note("kills", t.identifier, "\(t.identifier) was killed \(ignored)× for ignoring its expiration; iOS then withholds background time from the app for a while. Stop work when the expiration handler runs (or the task is cancelled) and complete.")
      }
      if t.cpuKills > 0 {
        note("cpuKills", t.identifier, "\(t.identifier) was killed \(t.cpuKills)× by the CPU monitor: it used the CPU heavily in the background (on battery, for processing). Do less per launch, or require external power for processing work.")
      }
      if t.expirations * 4 >= t.launches && t.expirations > 0 {
        let share = Int((Double(t.expirations) / Double(t.launches) * 100).rounded())
        note("expirations", t.identifier, "\(t.identifier) expired in \(share)% of launches: the work does not fit the budget; checkpoint so the next launch resumes where this one stopped, or split the work.")
      }
      if t.rejected > 0 {
        note("rejections", t.identifier, "\(t.identifier): \(t.rejected) submission(s) failed (\(t.mostCommonRejection ?? "error")).")
      }
      if let reason = t.mostCommonDeferral, reason != .alreadyRunning {
        note("heldBack", t.identifier, "\(t.identifier) was most often held back because \(reason.explanation).")
      }
      for (reason, topic) in [(DeferralReason.criticalBattery, "criticalBattery"), (.dataBudget, "dataBudget")]
      where reason != t.mostCommonDeferral {
        let times = trace.deferrals.reduce(0) { $0 + ($1.identifier == t.identifier && $1.reason == reason ? $1.count : 0) }
        if times > 0 { note(topic, t.identifier, "\(t.identifier) was held back \(times)× because \(reason.explanation).") }
      }
    }
    for s in sourceRows where s.refreshes > 0 && s.failures >= s.refreshes {
      note("sourceFailures", s.source, "source \(s.source): \(s.failures) launches serving it ended without refreshing it (failed or cut short), against \(s.refreshes) that did; its data kept ageing.")
    }
    for s in sourceRows where s.refreshes == 0 {
      if self.refreshOnOpen {
        note("neverRefreshed", s.source, "source \(s.source) was never refreshed in the background: at each open users saw the data of their previous open until the app's own fetch finished.")
      } else {
        note("neverRefreshed", s.source, "source \(s.source) was never refreshed in the background: users saw data as old as the last time the app fetched it in the foreground.")
      }
    }
    if sampledHourly && !trace.events.isEmpty {
      note("sampledHourly", "", "the trace has no app opens, so ages were sampled every hour.")
    }
    self.findings = findings
    let notes = findings.map(\.text)
    self.notes = notes
  }

  /// Nearest-rank percentile of sorted values.
  static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
    guard !sorted.isEmpty else { return nil }
    let rank = Int((p * Double(sorted.count)).rounded(.up))
    return sorted[min(sorted.count - 1, max(0, rank - 1))]
  }

  public var description: String {
    func age(_ s: Double?) -> String { s.map { TraceFormat.duration(seconds: $0) } ?? "-" }
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s.padding(toLength: n, withPad: " ", startingAt: 0) }
    func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? " " + s : String(repeating: " ", count: n - s.count) + s }
    var out: [String] = []
    let span = String(format: "%.1f", days)
    out.append("Freshness forecast: \(span) days, " + (sampledHourly ? "no app opens (ages sampled hourly)" : "\(appOpens) app opens"))
    out.append("")
    out.append(
      "Age of each source's data " + (sampledHourly ? "(hourly samples)" : "when the user opens the app")
        + (refreshOnOpen ? " (before its own fetch on opening lands)" : ""))
    let width = max(8, (sources.map(\.source.count).max() ?? 0) + 2)
    out.append(pad("source", width) + lpad("median", 9) + lpad("p95", 9) + lpad("worst", 9) + lpad("fresh<" + TraceFormat.compact(seconds: freshWithin), 10) + lpad("refreshes", 11) + lpad("failed", 8) + "  tasks")
    for s in sources {
      let fresh = s.freshShare.map { "\(Int(($0 * 100).rounded()))%" } ?? "-"
      out.append(pad(s.source, width) + lpad(age(s.medianAge), 9) + lpad(age(s.p95Age), 9) + lpad(age(s.worstAge), 9) + lpad(fresh, 10) + lpad("\(s.refreshes)", 11) + lpad("\(s.failures)", 8) + "  " + s.tasks.joined(separator: ", "))
    }
    out.append("")
    out.append("Launches per task")
    let idWidth = max(10, (tasks.map(\.identifier.count).max() ?? 0) + 2)
    out.append(pad("task", idWidth) + lpad("launches", 9) + lpad("ok", 6) + lpad("failed", 7) + lpad("expired", 8) + lpad("killed", 7) + lpad("rejected", 9) + lpad("median run", 11))
    for t in tasks {
      let killed = t.cpuKills > 0 ? "\(t.kills) (\(t.cpuKills) cpu)" : "\(t.kills)"
      out.append(pad(t.identifier, idWidth) + lpad("\(t.launches)", 9) + lpad("\(t.succeeded)", 6) + lpad("\(t.failed)", 7) + lpad("\(t.expirations)", 8) + lpad(killed, 7) + lpad("\(t.rejected)", 9) + lpad(age(t.medianDuration), 11))
    }
    if !notes.isEmpty {
      out.append("")
      out.append("Notes")
      for n in notes { out.append("- " + n) }
    }
    return out.joined(separator: "\n")
  }
}
