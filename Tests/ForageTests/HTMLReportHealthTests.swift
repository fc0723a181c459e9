import Foundation
import Testing
import ForageHTML
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// `forage report`'s extraction health (issue 29): each source's records
/// and field coverage per crawl, the episode of held changes marked, and a
/// source event shown as what it is in the notification table.
@Suite(.serialized) struct HTMLReportHealthTests {
  @Test func test_issue29_report_marksTheEpisode_andShowsSourceEventsAsEvents() async throws {
    let shop = try RedesignedShop()
    // Every notification is refused for good: they show in the dead table.
    let receiver = try WebhookReceiver(then: .gone)
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config(receiver)
    try await launch(config, store)
    shop.look.withLock { $0 = .renamedContainer }
    try await launch(config, store)
    try await launch(config, store)
    var fixed = shop.config(receiver, match: "div.item-card")
    fixed.sources[0].fields = [
      Field(name: "title", rule: "h2"), Field(name: "price", rule: .css(".cost", as: .number)),
    ]
    try await launch(fixed, store)
    let episodes = try await store.healthEpisodes(limit: 10)
    #expect(episodes.count == 1 && episodes.first?.resolution == .recovered)
    guard let episode = episodes.first else { return }

    let html = try await HTMLReport.render(store: store, config: fixed)
    let document = ForageHTML.Document.parse(html: html)
    let section = try #require(try document.selectFirst("section#health"))
    // One chart for the source: four crawls, the two redesigned ones held.
    let crawls = try section.select("svg g.crawl rect")
    #expect(crawls.count == 4)
    #expect(crawls.map { $0.attr("class") } == ["h-records", "h-held", "h-held", "h-records"])
    #expect(try section.select("svg g.crawl title").first?.text.contains("6 records") == true)
    // Coverage lines, one per field.
    #expect(try section.select("svg g.coverage polyline.cov").count == 2)
    // The episode's band, its start on the first held crawl, its end on the recovering one.
    let mark = try #require(try section.selectFirst("svg g.episode[data-episode=\"\(episode.id)\"]"))
    let start = try #require(try mark.select("line.ep-start").first?.attr("x1").flatMap(Double.init))
    let end = try #require(try mark.select("line.ep-end").first?.attr("x1").flatMap(Double.init))
    let centres = try crawls.map { rect -> Double in
      let x = try #require(rect.attr("x").flatMap(Double.init))
      let w = try #require(rect.attr("width").flatMap(Double.init))
      return x + w / 2
    }
    #expect(abs(start - centres[1]) < 0.02 && abs(end - centres[3]) < 0.02)
    #expect(try mark.select("rect.ep-band").count == 1)
    // The episode in words: when, what was held, how it ended.
    let item = try #require(try section.selectFirst("li.episode[data-episode=\"\(episode.id)\"]"))
    #expect(item.text.contains("pages no longer match: div.product: 6 records before"))
    #expect(item.text.contains("a later crawl was healthy"))
    #expect(item.text.contains(dateText(episode.startedAt)) && item.text.contains(dateText(episode.endedAt!)))

    // The outbox: the source events as events, not as "changed" rows.
    let dead = try #require(try document.selectFirst("section#notifications table"))
    let badges = try dead.select("td .badge").map(\.text)
    #expect(badges.contains("source.unhealthy") && badges.contains("source.recovered"))
    #expect(!badges.contains("changed"))
    // Before, a source event showed as a "changed" row keyed by the event's name.
    #expect(try dead.select("code.key").allSatisfy { !$0.text.hasPrefix("source.") })
  }

  /// The x of each crawl bar's centre and left edge in the health chart, oldest first.
  func bars(_ section: ForageHTML.Element) throws -> [(centre: Double, left: Double, slot: Double)] {
    try section.select("svg g.crawl rect").map { rect in
      let x = try #require(rect.attr("x").flatMap(Double.init))
      let w = try #require(rect.attr("width").flatMap(Double.init))
      // A bar is 60% of its slot, centred in it: the slot starts a third of its width before it.
      return (x + w / 2, x - w / 3, w / 0.6)
    }
  }

  /// The one instant of `launchAtOneInstant`.
  static let instant = Date(timeIntervalSince1970: 1_700_000_000)

  /// One launch of `config` on a virtual clock that does not move: every
  /// crawl completes at the same instant.
  static func launchAtOneInstant(_ config: ForageConfig, _ store: SQLiteStore) async throws {
    _ = try await Job(config: config, store: store, transport: Engine.defaultTransport(), now: { instant })
      .run(budget: .seconds(20))
  }

  /// The x of `mark`'s start and end lines.
  func marks(_ mark: ForageHTML.Element) throws -> (start: Double, end: Double) {
    let start = try #require(try mark.select("line.ep-start").first?.attr("x1").flatMap(Double.init))
    let end = try #require(try mark.select("line.ep-end").first?.attr("x1").flatMap(Double.init))
    return (start, end)
  }

  @Test func test_report_placesTheEpisodeByItsCrawls_whenTheClockStoodStillBetweenThem() async throws {
    let shop = try RedesignedShop()
    let receiver = try WebhookReceiver()
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config(receiver)
    func launch(_ config: ForageConfig) async throws { try await Self.launchAtOneInstant(config, store) }
    try await launch(config)
    shop.look.withLock { $0 = .renamedContainer }
    try await launch(config)
    try await launch(config)
    var fixed = shop.config(receiver, match: "div.item-card")
    fixed.sources[0].fields = [
      Field(name: "title", rule: "h2"), Field(name: "price", rule: .css(".cost", as: .number)),
    ]
    try await launch(fixed)
    let episode = try #require(try await store.healthEpisodes(limit: 10).first)
    let crawls = try await store.crawlHealth(source: "shop", limit: 10).reversed().map(\.crawl)
    #expect(crawls.count == 4 && episode.resolution == .recovered)
    #expect(episode.startCrawl == crawls[1] && episode.endCrawl == crawls[3])

    let html = try await HTMLReport.render(store: store, config: fixed)
    let section = try #require(try ForageHTML.Document.parse(html: html).selectFirst("section#health"))
    let bars = try bars(section)
    let mark = try marks(try #require(try section.selectFirst("svg g.episode[data-episode=\"\(episode.id)\"]")))
    // By dates, every crawl completed "at" the episode's start and end: both marks fell on the first crawl.
    #expect(abs(mark.start - bars[1].centre) < 0.02 && abs(mark.end - bars[3].centre) < 0.02, "\(mark)")
  }

  @Test func test_report_placesAnAcceptanceAfterTheCrawlItFollowed_whenTheClockStoodStill() async throws {
    let shop = try RedesignedShop()
    let receiver = try WebhookReceiver()
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config(receiver)
    func launch() async throws { try await Self.launchAtOneInstant(config, store) }
    try await launch()
    shop.look.withLock { $0 = .priceMoved }
    try await launch()
    let accepted = try #require(
      try await store.acceptHeldChanges(source: "shop", router: NotificationRouter(config: config), now: Self.instant))
    shop.look.withLock { $0 = .original }
    try await launch()
    let crawls = try await store.crawlHealth(source: "shop", limit: 10).reversed().map(\.crawl)
    #expect(crawls.count == 3)
    #expect(accepted.episode.startCrawl == crawls[1] && accepted.episode.endCrawl == crawls[1])
    let episode = try #require(try await store.healthEpisodes(limit: 10).first)
    #expect(episode.endCrawl == crawls[1] && episode.resolution == .accepted)

    let html = try await HTMLReport.render(store: store, config: config)
    let section = try #require(try ForageHTML.Document.parse(html: html).selectFirst("section#health"))
    let bars = try bars(section)
    let mark = try marks(try #require(try section.selectFirst("svg g.episode[data-episode=\"\(episode.id)\"]")))
    // Started on the held crawl; ended between it and the next one (the next slot's left edge).
    #expect(abs(mark.start - bars[1].centre) < 0.02 && abs(mark.end - bars[2].left) < 0.02, "\(mark)")
  }
}
