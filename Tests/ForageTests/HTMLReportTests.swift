import Foundation
import Testing
import ForageHTML
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// A shop whose item names are hostile: markup, an attribute break-out.
final class HostileShop: Sendable {
  static let script = "<script>alert(1)</script>"
  static let attribute = "\" onerror=\"x"
  let items = Locked<[(name: String, price: Int, note: String)]>([
    (HostileShop.script, 12, "A lamp with a switch, a long cord and a shade; the words go on past eighty characters here."),
    (HostileShop.attribute, 80, "short"),
  ])
  let server: TestServer

  init() throws {
    let items = self.items
    server = try TestServer(routes: [
      "/items": Route { _ in
        // The page escapes the names properly: the extracted text is the hostile string.
        let rows = items.withLock { $0 }.map {
          "<li class=item><b class=name>\(esc($0.name))</b> <span class=price>$\($0.price)</span>"
            + "<p class=note>\(esc($0.note))</p></li>"
        }
        return .html("<ul>\(rows.joined())</ul>")
      }
    ])
  }

  func change(_ index: Int, price: Int, note: String? = nil) {
    items.withLock {
      $0[index].price = price
      if let note { $0[index].note = note }
    }
  }

  /// One source (`<shop>`) whose fields have a `<` in their names.
  func config(_ channels: [NotifyChannel], tasks: [TaskDefinition] = []) -> ForageConfig {
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    let source = Source(
      name: "shop<1>", url: server.url("/items"),
      extract: ["<b>name": ".name", "price<": .css(".price", as: .number), "note": ".note"],
      items: ".item", key: ["<b>name"])
    var config = ForageConfig(fetch: fetch, tasks: tasks, sources: [source])
    config.notify = channels
    return config
  }
}

@Suite(.serialized) struct HTMLReportTests {
  /// Every element and attribute of `html` as the project's HTML5 parser
  /// (the algorithm browsers use) builds them.
  func parsed(_ html: String) -> (elements: [String], attributes: [String], text: String) {
    let document = ForageHTML.Document.parse(html: html)
    var elements: [String] = []
    var attributes: [String] = []
    var stack = [document.rootID]
    while let node = stack.popLast() {
      if document.kind(node) == .element {
        elements.append(document.localName(node))
        attributes += document.attributes(node).map(\.name)
      }
      stack += Array(document.children(node))
    }
    return (elements, attributes, document.textContent(of: document.rootID))
  }

  func expectNoOutsideReferences(_ html: String) {
    let lower = html.lowercased()
    for banned in ["<script", "src=", "href=", "@import", "url(", "<link", "<iframe", "<object", "<embed", "<img"] {
      #expect(!lower.contains(banned), "the report holds \(banned)")
    }
  }

  @Test func test_hostileTitlesFieldNamesAndErrors_showOnlyAsText() async throws {
    let shop = try HostileShop()
    let receiver = try WebhookReceiver(script: [.gone])
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(name: "hook<\"'>", target: .webhook(url: receiver.url, secretEnv: nil))])
    try await launch(config, store)
    shop.change(0, price: 10, note: "A lamp with a switch, a short cord and a shade; the words go on past eighty characters here.")
    try await launch(config, store)
    // A failure whose URL holds quotes and markup, as a later launch could record it.
    let run = try await store.beginRun(task: "run", sources: ["shop<1>"], startedAt: Date())
    var summary = RunSummary(outcome: .failed, finishedAt: Date())
    var part = SourceRunSummary(name: "shop<1>")
    part.pagesFailed = 1
    part.failures = [#"https://x.example/a"onmouseover='b'<i>: HTTP 500 <b>boom</b>"#]
    summary.sources = [part]
    summary.pagesFailed = 1
    try await store.finishRun(run, summary: summary)

    let html = try await HTMLReport.render(store: store, config: config)
    expectNoOutsideReferences(html)
    // The hostile strings appear escaped, never raw.
    #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    #expect(!html.contains(HostileShop.attribute))
    #expect(html.contains("&quot; onerror=&quot;x"))
    #expect(html.contains("shop&lt;1&gt;") && !html.contains("shop<1>"))
    #expect(html.contains("&lt;b&gt;name") && !html.contains("<b>name"))
    #expect(html.contains("price&lt;"))
    #expect(html.contains("hook&lt;&quot;&#39;&gt;"))
    #expect(html.contains("https://x.example/a&quot;onmouseover=&#39;b&#39;&lt;i&gt;"))
    #expect(html.contains("HTTP 500 &lt;b&gt;boom&lt;/b&gt;"))
    #expect(!html.contains("onmouseover='b'"))

    // As a browser parses it: no script, no event handler, no style
    // attribute; the text reads as the scraped text.
    let dom = parsed(html)
    #expect(!dom.elements.contains("script"))
    #expect(dom.elements.contains("svg") && dom.elements.contains("rect"))
    #expect(!dom.attributes.contains { $0.hasPrefix("on") || $0 == "style" || $0 == "href" || $0 == "src" })
    #expect(dom.text.contains(HostileShop.script))
    #expect(dom.text.contains(HostileShop.attribute))
    #expect(dom.text.contains("hook<\"'>"))

    // The figures: the price change, the word diff, the dead notification.
    #expect(html.contains("<del>12</del> → <ins>10</ins>"))
    #expect(html.contains("<del>long </del><ins>short </ins>"))
    #expect(dom.text.contains("Dead (given up)"))
    let dead = try await store.notifications(state: .dead, limit: 5)
    #expect(dead.count == 1)
    #expect(html.contains(esc(try #require(dead.first?.lastError))))
    #expect(html.contains("<div class=\"num\">1</div><div class=\"muted\">Dead</div>"))
    #expect(html.contains("1 notification is dead"))
    // Three launches: two completed, one failed; errors grouped.
    #expect(html.contains("2 completed, 1 failed"))
    #expect(html.contains("class=\"o-completed\"") && html.contains("class=\"o-failed\""))
    #expect(html.contains("<td class=\"n\">1</td>"))
    // The config has no tasks: the forecast says why there is none.
    #expect(html.contains("No forecast: the config has no tasks"))
  }

  /// Launches of every outcome, two sources of which one is slow, a pending
  /// request: written straight into the store at fixed dates.
  @Test func test_timelineOutcomes_freshness_andTheSlowSource() async throws {
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    func run(
      _ task: String, _ source: String, hoursAgo: Double, _ outcome: RunOutcome?, seconds: Double, pages: Int,
      failed: Int = 0, completed: Bool = false
    ) async throws {
      let start = now.addingTimeInterval(-hoursAgo * 3600)
      let id = try await store.beginRun(task: task, sources: [source], startedAt: start)
      guard let outcome else { return }
      var summary = RunSummary(outcome: outcome, finishedAt: start.addingTimeInterval(seconds))
      summary.seconds = seconds
      summary.pagesFetched = pages
      summary.pagesFailed = failed
      var part = SourceRunSummary(name: source)
      part.pagesFetched = pages
      part.pagesFailed = failed
      part.completed = completed
      if failed > 0 { part.failures = Array(repeating: "https://slow.example/p: timed out after 10 s", count: failed) }
      summary.sources = [part]
      if completed { summary.completedSources = [source] }
      try await store.finishRun(id, summary: summary)
    }
    // The store knows a source once a crawl of it opened.
    for source in ["fast", "slow", "gone"] { _ = try await store.openCrawl(source: source, seeds: [], now: now) }
    try await run("fast.refresh", "fast", hoursAgo: 30, .completed, seconds: 2, pages: 20, completed: true)
    try await run("fast.refresh", "fast", hoursAgo: 20, .budget, seconds: 30, pages: 300)
    try await run("fast.refresh", "fast", hoursAgo: 10, .completed, seconds: 3, pages: 30, completed: true)
    try await run("slow.crawl", "slow", hoursAgo: 25, .completed, seconds: 120, pages: 12, completed: true)
    try await run("slow.crawl", "slow", hoursAgo: 15, .interrupted, seconds: 50, pages: 5)
    try await run("slow.crawl", "slow", hoursAgo: 5, .failed, seconds: 40, pages: 3, failed: 4)
    try await run("slow.crawl", "slow", hoursAgo: 1, nil, seconds: 0, pages: 0)
    // A crawl that completed with every page failed refreshed nothing.
    try await run("gone.check", "gone", hoursAgo: 2, .completed, seconds: 1, pages: 0, failed: 1, completed: true)
    try await store.replacePendingTaskRequests([
      PendingTaskRequest(identifier: "fast.refresh", kind: "appRefresh", earliestBeginDate: now.addingTimeInterval(900))
    ])

    let html = try await HTMLReport.render(store: store, now: now)
    expectNoOutsideReferences(html)
    for outcome in ["completed", "budget", "interrupted", "failed", "unfinished"] {
      #expect(html.contains("<rect class=\"o-\(outcome)\""), "no \(outcome) launch drawn")
    }
    #expect(html.contains("2 completed, 1 stopped by budget"))
    #expect(html.contains("1 completed, 1 interrupted, 1 failed, 1 unfinished"))
    #expect(html.contains("next launch: not before 2027-01-15 08:15:00Z"))
    #expect(html.contains("Device conditions at each launch: not recorded"))  // these runs came from no scheduler
    // Freshness: fast was refreshed by the launch that started 10 h ago, slow 25 h ago.
    #expect(html.contains("now 10h old"))
    #expect(html.contains("now 25h old"))
    #expect(html.contains("<polyline class=\"age\""))
    #expect(html.contains("<b class=\"name\">gone</b><div class=\"muted\">no crawl completed with pages answered</div>"))
    // Time per page: slow's 10 s a page against fast's 0.1 s; slow stands out.
    #expect(html.contains("<span class=\"name\">slow</span>"))
    #expect(html.contains("10s per page <b class=\"badge bad\">slowest</b>"))
    #expect(html.contains("100ms per page</span>"))
    // Errors grouped by cause.
    #expect(html.contains("<td class=\"cause\">timed out after 10 s</td><td class=\"n\">4</td>"))
    // The same store and time give the same page.
    #expect(try await HTMLReport.render(store: store, now: now) == html)
  }

  @Test func test_withTasks_theForecastIsSimulated_andDeterministic() async throws {
    let shop = try HostileShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([], tasks: [TaskDefinition(id: "shop.refresh", every: .seconds(3600), sources: ["shop<1>"])])
    try await launch(config, store)
    let now = Date()
    let html = try await HTMLReport.render(store: store, config: config, now: now)
    expectNoOutsideReferences(html)
    #expect(html.contains("3 simulated days on the commuter profile"))
    #expect(html.contains("<td class=\"name\">shop.refresh</td>"))
    #expect(html.contains("<td class=\"name\">shop&lt;1&gt;</td><td class=\"barcell\">"))
    #expect(try await HTMLReport.render(store: store, config: config, now: now) == html)
    // Without a config: said, not simulated.
    #expect(try await HTMLReport.render(store: store, now: now).contains("No forecast: give --config FILE"))
  }

  @Test func test_escape_coversEveryDangerousCharacter() {
    #expect(esc(#"<a href="x" onclick='y'>&amp;</a>"#) == "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;")
    #expect(esc("a\u{0}b\u{1B}c\td\ne") == "a\u{FFFD}b\u{FFFD}c\td\ne")
    #expect(coord(.nan) == "0" && coord(.infinity) == "0" && coord(1.2345) == "1.23")
  }
}
