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
}
