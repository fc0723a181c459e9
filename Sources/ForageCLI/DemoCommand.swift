import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageTestSupport

/// `forage demo`: crawls a generated shop served on loopback, end to end.
struct DemoCommand: Command {
  static let name = "demo"
  static let abstract = "Crawl a generated demo shop on loopback into SQLite."
  static let arguments: [Argument] = [
    .option("--store", "PATH", "The SQLite file.", default: "forage-demo.sqlite"),
    .option("--products", "N", "Products on the site, 1 to 1000000.", default: "200"),
    .option("--budget", "DURATION", "Time allowed.", default: "60s"),
    .flag("--serve", "Only serve the site and print its URL and a matching config, until interrupted."),
    .option(
      "--port", "N", "The port to serve on (with --serve; 0 picks a free one).",
      default: String(DemoCommand.defaultPort)),
    .flag("--json", "Print the summary as JSON."),
  ]
  static let discussion = """
    Starts a small shop site on 127.0.0.1 (generated, messy HTML, robots.txt),
    crawls it with the same engine as 'forage run', stores one record per
    product in SQLite, and prints the summary and a few records. Running it
    again revisits the site: records come back unchanged.
    """

  var store = "forage-demo.sqlite"
  var products = 200
  var budget: Duration = .seconds(60)
  var serve = false
  var json = false
  var port: UInt16?

  /// The port `forage demo --serve` listens on, which `forage init`'s config names.
  static let defaultPort: UInt16 = 8765

  init(_ args: inout ArgumentList) throws(UsageError) {
    store = try args.option("--store") ?? store
    if let p = try args.option("--products") {
      guard let n = Int(p), n > 0, n <= 1_000_000 else { throw UsageError("--products expects a number from 1 to 1000000") }
      products = n
    }
    budget = try parseBudget(try args.option("--budget")) ?? budget
    serve = args.flag("--serve")
    if let p = try args.option("--port") {
      guard let n = UInt16(p) else { throw UsageError("--port expects a number from 0 to 65535, not \"\(p)\"") }
      port = n
    }
    if port != nil && !serve { throw UsageError("--port goes with --serve") }
    json = args.flag("--json")
    try args.expectNoMore()
  }

  /// The demo's config for a site at `baseURL`.
  static func config(baseURL: String, store: String) -> ForageConfig {
    var fetch = FetchSettings()
    fetch.perHostConcurrency = 8
    fetch.perHostDelay = .zero
    return ForageConfig(
      userAgent: "ForageDemo/1.0 (+https://github.com/forage/forage)", store: store, fetch: fetch,
      tasks: [TaskDefinition(id: "demo.refresh", kind: .appRefresh, budget: .seconds(30), sources: ["catalog"])],
      sources: [
        Source(
          name: "catalog", url: baseURL + "/",
          extract: [
            "title": "h1.product-title",
            "price": .css("span.price", as: .number),
            "sku": .css("div.product", attr: "data-sku", required: true),
          ],
          match: "div.product", key: ["sku"],
          crawl: CrawlScope(maxDepth: 5, maxPages: 100_000, revisitAfter: .zero))
      ])
  }

  func run(_ out: Terminal) async -> ExitStatus {
    let server: TestServer
    let listenPort = serve ? port ?? DemoCommand.defaultPort : 0
    do { server = try TestServer(site: DemoSite(products: products), port: listenPort) } catch {
      let hint = serve ? " (is another demo running? --port picks another port)" : ""
      out.error("forage demo: cannot start the demo site on port \(listenPort): \(error)\(hint)")
      return .jobFailed
    }
    defer { server.stop() }
    let config = DemoCommand.config(baseURL: server.baseURL, store: store)
    if serve {
      out.print("Demo shop at \(server.baseURL)/ (\(products) products). Config for 'forage run':")
      out.print(config.jsonText)
      out.print("Press Ctrl-C to stop.")
      while true { try? await Task.sleep(for: .seconds(3600)) }
    }
    let opened: any Store
    do { opened = try Engine.openStore(store) } catch {
      out.error("forage demo", error)
      return .badInput
    }
    if !json { out.note("Crawling the demo shop at \(server.baseURL)/ into \(store)...") }
    let throttle = ProgressThrottle(out, budget: budget)
    do {
      let summary = try await Job(config: config, store: opened, transport: Engine.defaultTransport())
        .run(task: "demo.refresh", budget: budget, progress: { throttle.update($0) })
      out.clearProgress()
      if json {
        out.print(jsonText(summary))
        try await opened.close()
        return .ok
      }
      out.print(summary.description)
      var sample: [String] = []
      try await Exporter(store: opened).export(format: .jsonl, source: "catalog") { line in
        if sample.count < 3 { sample.append(line.trimmingCharacters(in: .newlines)) }
      }
      if !sample.isEmpty {
        out.print("\nFirst records:")
        for s in sample { out.print("  " + s) }
      }
      out.print("\nExport them all: swift run forage export --store \(store) --format csv")
      try await opened.close()
      return .ok
    } catch {
      out.error("forage demo", error)
      return .jobFailed
    }
  }
}
