import Foundation
import Forage
import ForageScheduler
import ForageStore

/// What `forage demo` tells when its simulated days are over.
struct DemoStory {
  var days: Double
  var profile: String
  var seed: UInt64
  var launches = 0, completed = 0, expired = 0, killed = 0
  /// Why pending requests waited, most common first: `not charging ×40`.
  var waits: [String] = []
  var pagesFetched = 0, pagesNotModified = 0, pagesFresh = 0, pagesFailed = 0
  var changes: [ChangeKind: Int] = [:]
  var latest: [RecordChange] = []
  var notifications = 0
  var firstNotifications: [String] = []
  var forecast: String
  /// The health episodes, oldest first (the redesign's).
  var episodes: [HealthEpisode] = []
  /// Source events sent, by kind (`source.unhealthy`, `source.recovered`).
  var healthEvents: [SourceEvent.Kind: Int] = [:]
  /// When the shop was redesigned, if it was.
  var redesign: Range<Date>?
  var start = Date(timeIntervalSince1970: 0)

  /// Reads what happened from the simulation's trace and the store.
  static func tell(result: SimulationResult, store: any Store, folder: String, end: Date) async throws -> DemoStory {
    var story = DemoStory(
      days: result.forecast.days, profile: result.profile, seed: result.seed, forecast: result.forecast.description)
    let trace = result.trace
    story.launches = trace.count(.launched)
    story.completed = trace.count(.completed)
    story.expired = trace.count(.expired)
    story.killed = trace.count(.killed)
    story.waits = trace.deferrals.sorted { $0.count > $1.count }.prefix(3).map {
      "\($0.reason.explanation) ×\($0.count)"
    }
    for run in try await store.runs(limit: 10_000) {
      guard let s = run.summary else { continue }
      story.pagesFetched += s.pagesFetched
      story.pagesNotModified += s.pagesNotModified
      story.pagesFresh += s.pagesFresh
      story.pagesFailed += s.pagesFailed
    }
    var before: Int64?
    while true {
      let page = try await store.changes(matching: ChangeQuery(beforeID: before, limit: 1000))
      for c in page { story.changes[c.kind, default: 0] += 1 }
      guard let last = page.last, page.count == 1000 else { break }
      before = last.id
    }
    story.latest = try await store.changes(matching: ChangeQuery(kinds: [.changed, .removed], limit: 4))
    story.episodes = try await store.healthEpisodes(limit: 100).sorted { $0.startedAt < $1.startedAt }
    let file = folder + "/notifications.jsonl"
    if let text = try? String(contentsOfFile: file, encoding: .utf8) {
      let lines = text.split(separator: "\n")
      story.notifications = lines.count
      for line in lines {
        guard let document = try? JSONValue.parse(String(line)) else { continue }
        var members = [document]
        if case .array(let batch)? = document["notifications"] { members = batch }
        for member in members {
          guard case .string(let type)? = member["type"], let kind = SourceEvent.Kind(rawValue: type) else { continue }
          story.healthEvents[kind, default: 0] += 1
        }
      }
      story.firstNotifications = lines.prefix(2).map { String($0.prefix(160)) + ($0.count > 160 ? "…" : "") }
    }
    story.notificationFile = file
    return story
  }

  var notificationFile = ""

  var text: String {
    var lines: [String] = []
    let span = days == days.rounded() ? String(Int(days)) : String(days)
    lines.append("\(span) simulated days on the \(profile) profile (seed \(seed)):")
    lines.append(
      "  launches: \(launches) granted by the system, \(completed) completed, \(expired) expired, \(killed) killed")
    if !waits.isEmpty { lines.append("  waiting: " + waits.joined(separator: "; ")) }
    lines.append(
      "  pages: \(pagesFetched) fetched, \(pagesNotModified) not modified, \(pagesFresh) still fresh, \(pagesFailed) failed")
    let kinds = ChangeKind.allCases.map { "\(changes[$0, default: 0]) \($0.rawValue)" }.joined(separator: ", ")
    lines.append("  changes: \(kinds)")
    for change in latest {
      for line in ChangeText.lines(change) { lines.append("    " + line) }
    }
    lines.append(
      "  notifications: \(notifications) sent to \(notificationFile) (the first crawl's new records are not notable)")
    for n in firstNotifications { lines.append("    " + n) }
    lines += healthLines
    lines.append("")
    lines.append(forecast)
    return lines.joined(separator: "\n")
  }

  func json(report: String, store: String) -> String {
    let object: JSONValue = .object([
      ("days", .number(days)), ("profile", .string(profile)), ("seed", .number(Double(seed))),
      ("launches", .number(Double(launches))), ("completed", .number(Double(completed))),
      ("expired", .number(Double(expired))), ("killed", .number(Double(killed))),
      ("pagesFetched", .number(Double(pagesFetched))), ("pagesNotModified", .number(Double(pagesNotModified))),
      ("pagesFresh", .number(Double(pagesFresh))), ("pagesFailed", .number(Double(pagesFailed))),
      ("changes", .object(ChangeKind.allCases.map { ($0.rawValue, .number(Double(changes[$0, default: 0]))) })),
      ("notifications", .number(Double(notifications))), ("notificationFile", .string(notificationFile)),
      ("healthEvents", .object(SourceEvent.Kind.allCases.map { ($0.rawValue, .number(Double(healthEvents[$0, default: 0]))) })),
      ("episodes", .number(Double(episodes.count))),
      ("report", .string(report)), ("store", .string(store)),
    ])
    return object.serialized()
  }
}

extension DemoStory {
  /// The day of `date` in the story, counted from 1.
  func dayNumber(_ date: Date) -> Int { Int(max(0, date.timeIntervalSince(start)) / 86_400) + 1 }

  /// The redesign's part of the story: what Forage held, the alert, the recovery.
  var healthLines: [String] {
    guard let redesign else { return [] }
    var lines = [
      "  health: on day \(dayNumber(redesign.lowerBound)) the shop was redesigned until noon (its product container "
        + "div.product renamed div.product-card: every page still answers, the selector finds nothing), then changed back"
    ]
    if episodes.isEmpty { lines.append("    no crawl completed while the shop was redesigned: nothing was held") }
    for e in episodes {
      lines.append("    day \(dayNumber(e.startedAt)): changes held, not applied (\(e.evidence)); source.unhealthy sent")
      if let end = e.endedAt {
        let how = e.resolution == .accepted ? "the held changes were accepted" : "a crawl was healthy again"
        lines.append("    day \(dayNumber(end)): \(how): what was real applied; source.recovered sent")
      } else {
        lines.append("    still held at the end: see forage health --store STORE")
      }
    }
    let sent = SourceEvent.Kind.allCases.map { "\(healthEvents[$0, default: 0]) \($0.rawValue)" }
    lines.append("    source events: " + sent.joined(separator: ", ") + " (one each, never one per launch)")
    return lines
  }
}
