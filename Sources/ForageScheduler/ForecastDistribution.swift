import Foundation

/// Freshness forecasts of several seeds summed up: each figure as the median
/// over the seeds with the range from the 10th to the 90th percentile. One
/// seed is one possible year; for a rarely used app the median age moves by
/// hours between seeds, and the range says by how much.
///
///     let forecasts = seeds.map { seed in FreshnessForecast(trace: run(seed), sources: served) }
///     let spread = ForecastDistribution(seeds: seeds, forecasts: forecasts)
///     print(spread)   // median (p10–p90) per source and task
///
/// Percentiles are nearest rank over the seeds that measured the figure
/// (a source never sampled in a run has no age there); the same seeds give
/// the same distribution. The seeds' notes are kept once per topic and task
/// or source (``notes``), with the seeds that made each.
public struct ForecastDistribution: Codable, Sendable, CustomStringConvertible {
  /// One figure over the seeds: median, 10th and 90th percentile.
  public struct Figure: Codable, Sendable, Hashable {
    /// The median over the seeds that measured it; nil when none did.
    public var median: Double?
    /// The 10th percentile (nearest rank); nil when no seed measured it.
    public var p10: Double?
    /// The 90th percentile (nearest rank); nil when no seed measured it.
    public var p90: Double?

    /// The figure of `values` (in any order).
    public init(_ values: [Double]) {
      let sorted = values.sorted()
      median = FreshnessForecast.percentile(sorted, 0.5)
      p10 = FreshnessForecast.percentile(sorted, 0.1)
      p90 = FreshnessForecast.percentile(sorted, 0.9)
    }
  }

  /// One source over the seeds.
  public struct SourceRow: Codable, Sendable, Hashable {
    /// The source's name.
    public var source: String
    /// The tasks that refresh it.
    public var tasks: [String]
    /// Each seed's median age at open, in seconds.
    public var medianAge: Figure
    /// Each seed's 95th percentile age, in seconds.
    public var p95Age: Figure
    /// Each seed's worst age, in seconds.
    public var worstAge: Figure
    /// Each seed's share of fresh samples (0–1).
    public var freshShare: Figure
    /// Each seed's count of refreshes of the source.
    public var refreshes: Figure
    /// Each seed's count of failed refreshes of the source.
    public var failures: Figure
  }

  /// One task over the seeds.
  public struct TaskRow: Codable, Sendable, Hashable {
    /// The task's identifier.
    public var identifier: String
    /// Each seed's count of the task's launches.
    public var launches: Figure
    /// Of the launches, those that ended with success.
    public var succeeded: Figure
    /// Of the launches, those that failed.
    public var failed: Figure
    /// Of the launches, those the system expired.
    public var expirations: Figure
    /// Of the launches, those the system killed (no completion after expiration, or the CPU monitor).
    public var kills: Figure
    /// Of the kills, those by the CPU monitor.
    public var cpuKills: Figure
  }

  /// A finding of one or more seeds' forecasts
  /// (``FreshnessForecast/Finding``), with the seeds that made it.
  public struct Note: Codable, Sendable, Hashable {
    /// What it is about: the topic and the task or source.
    public var topic: String
    /// The task identifier or source name; empty for the whole run.
    public var subject: String
    /// The sentence, as the first seed that made it wrote it (its figures
    /// are that seed's).
    public var text: String
    /// The seeds whose forecast made this finding.
    public var seeds: [UInt64]
    /// True when the seeds wrote it with different figures.
    public var figuresVary: Bool
  }

  /// The seeds, in the order run.
  public var seeds: [UInt64]
  /// The simulated span in days (the same for every seed).
  public var days: Double
  /// App opens per seed.
  public var appOpens: Figure
  /// True when ages were sampled hourly (no app opens).
  public var sampledHourly: Bool
  /// The threshold for fresh, in seconds.
  public var freshWithin: Double
  /// Each source's figures.
  public var sources: [SourceRow]
  /// Each task's figures.
  public var tasks: [TaskRow]
  /// The seeds' findings, one per topic and subject, in the order they
  /// first appear.
  public var notes: [Note]

  /// Sums up `forecasts`, one per seed of `seeds`.
  public init(seeds: [UInt64], forecasts: [FreshnessForecast]) {
    self.seeds = seeds
    days = forecasts.first?.days ?? 0
    appOpens = Figure(forecasts.map { Double($0.appOpens) })
    sampledHourly = forecasts.contains { $0.sampledHourly }
    freshWithin = forecasts.first?.freshWithin ?? 3600
    let sourceNames = Set(forecasts.flatMap { $0.sources.map(\.source) }).sorted()
    sources = sourceNames.map { name in
      let rows = forecasts.compactMap { f in f.sources.first { $0.source == name } }
      return SourceRow(
        source: name, tasks: rows.first?.tasks ?? [],
        medianAge: Figure(rows.compactMap(\.medianAge)), p95Age: Figure(rows.compactMap(\.p95Age)),
        worstAge: Figure(rows.compactMap(\.worstAge)), freshShare: Figure(rows.compactMap(\.freshShare)),
        refreshes: Figure(rows.map { Double($0.refreshes) }), failures: Figure(rows.map { Double($0.failures) }))
    }
    let taskIDs = Set(forecasts.flatMap { $0.tasks.map(\.identifier) }).sorted()
    tasks = taskIDs.map { id in
      let rows = forecasts.compactMap { f in f.tasks.first { $0.identifier == id } }
      func figure(_ k: KeyPath<FreshnessForecast.TaskSummary, Int>) -> Figure { Figure(rows.map { Double($0[keyPath: k]) }) }
      return TaskRow(
        identifier: id, launches: figure(\.launches), succeeded: figure(\.succeeded), failed: figure(\.failed),
        expirations: figure(\.expirations), kills: figure(\.kills), cpuKills: figure(\.cpuKills))
    }
    var notes: [Note] = []
    var index: [String: Int] = [:]
    for (seed, forecast) in zip(seeds, forecasts) {
      for finding in forecast.findings {
        let key = finding.topic + "\u{0}" + finding.subject
        if let i = index[key] {
          if notes[i].seeds.last != seed { notes[i].seeds.append(seed) }
          if notes[i].text != finding.text { notes[i].figuresVary = true }
        } else {
          index[key] = notes.count
          notes.append(Note(
            topic: finding.topic, subject: finding.subject, text: finding.text, seeds: [seed], figuresVary: false))
        }
      }
    }
    self.notes = notes
  }

  public var description: String {
    func age(_ s: Double?) -> String { s.map { TraceFormat.duration(seconds: $0) } ?? "-" }
    func share(_ s: Double?) -> String { s.map { "\(Int(($0 * 100).rounded()))%" } ?? "-" }
    func count(_ s: Double?) -> String { s.map { "\(Int($0.rounded()))" } ?? "-" }
    func range(_ f: Figure, _ text: (Double?) -> String) -> String {
      f.p10 == f.p90 ? text(f.median) : "\(text(f.median)) (\(text(f.p10))–\(text(f.p90)))"
    }
    func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s.padding(toLength: n, withPad: " ", startingAt: 0) }
    var out: [String] = []
    let span = String(format: "%.1f", days)
    let seedText = seeds.count == 1 ? "seed \(seeds[0])" : "\(seeds.count) seeds (\(seeds.first!)–\(seeds.last!))"
    out.append(
      "Freshness forecast: \(span) days, \(seedText), "
        + (sampledHourly ? "ages sampled hourly" : "\(range(appOpens, count)) app opens"))
    out.append("Each figure is the median over the seeds, with the 10th–90th percentile range.")
    out.append("")
    out.append("Age of each source's data " + (sampledHourly ? "(hourly samples)" : "when the user opens the app"))
    let rows = sources.map { s in
      [s.source, range(s.medianAge, age), range(s.p95Age, age), range(s.worstAge, age), range(s.freshShare, share),
       range(s.refreshes, count), range(s.failures, count)]
    }
    let head = ["source", "median", "p95", "worst", "fresh<" + TraceFormat.compact(seconds: freshWithin), "refreshes", "failed"]
    out += table(head, rows, pad)
    out.append("")
    out.append("Launches per task")
    let taskRows = tasks.map { t in
      [t.identifier, range(t.launches, count), range(t.succeeded, count), range(t.failed, count),
       range(t.expirations, count), range(t.kills, count)]
    }
    out += table(["task", "launches", "ok", "failed", "expired", "killed"], taskRows, pad)
    if !notes.isEmpty {
      out.append("")
      out.append("Notes")
      for n in notes {
        var which: [String] = []
        if n.seeds.count < seeds.count { which.append("\(n.seeds.count) of \(seeds.count) seeds") }
        if n.figuresVary { which.append("figures of seed \(n.seeds[0])") }
        let suffix = which.isEmpty ? "" : " (" + which.joined(separator: "; ") + ")"
        out.append("- " + (n.text.hasSuffix(".") ? n.text.dropLast() + suffix + "." : n.text + suffix))
      }
    }
    return out.joined(separator: "\n")
  }

  /// Left-aligned columns two spaces apart.
  private func table(_ head: [String], _ rows: [[String]], _ pad: (String, Int) -> String) -> [String] {
    let widths = head.indices.map { i in ([head[i]] + rows.map { $0[i] }).map(\.count).max()! + 2 }
    return ([head] + rows).map { row in row.indices.map { pad(row[$0], widths[$0]) }.joined().trimmingCharacters(in: .whitespaces) }
  }
}
