import Foundation
import Forage
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageTestSupport

/// `forage demo`: the whole story in under a minute, offline.
struct DemoCommand: Command {
  static let name = "demo"
  static let abstract = "Simulate days of refreshing a changing demo shop; write a report."
  static let arguments: [Argument] = [
    .option("--days", "N", "Simulated days, 1 to 14.", default: "3"),
    .option("--profile", "NAME|FILE", "The device's day (see forage simulate).", default: "commuter"),
    .option("--seed", "S", "The seed of every random draw: the same seed, the same days.", default: "1"),
    .option("--products", "N", "Products in the shop, 1 to 1000.", default: "60"),
    .option("--store", "PATH", "The SQLite file to fill; without it, a new one in a temporary folder."),
    .option(
      "--report", "FILE",
      "Where the HTML report goes. A regular file is replaced once the report is complete; a folder or a device is "
        + "refused.", default: "report.html"),
    .flag("--serve", "Only serve the (unchanging) demo shop and print a config for it, until interrupted."),
    .option(
      "--port", "N", "The port to serve on (with --serve; 0 picks a free one).",
      default: String(DemoCommand.defaultPort)),
    .flag("--json", "Print what happened as JSON."),
  ]
  static let discussion = """
    Starts a demo shop on 127.0.0.1 whose prices change, products go away and
    news feed grows as simulated time passes. Over 2 days or more, the shop is
    redesigned on the morning of day 2 (its product container's class renamed:
    every page still answers, the selector finds nothing) and changes back at
    noon, so the story shows Forage holding the removals, the source.unhealthy
    alert and the recovery with source.recovered. Then simulates DAYS days of a
    phone on the given profile: each background launch the system would grant
    runs the real job (the same engine as 'forage run') against the shop at
    that simulated moment, within the launch's budget. Prints the launches and
    expirations, the pages, the changes, the notifications it sent (to a file),
    the freshness forecast, and writes an HTML report.
    """

  var days = 3
  var profile = "commuter"
  var seed: UInt64 = 1
  var products = 60
  var store: String?
  var reportPath = "report.html"
  var serve = false
  var json = false
  var port: UInt16?

  /// The port `forage demo --serve` listens on, which `forage init`'s config names.
  static let defaultPort: UInt16 = 8765

  init(_ args: inout ArgumentList) throws(UsageError) {
    if let d = try args.option("--days") {
      guard let n = Int(d), (1...14).contains(n) else { throw UsageError("--days expects a number from 1 to 14, not \"\(d)\"") }
      days = n
    }
    profile = try args.option("--profile") ?? profile
    if let s = try args.option("--seed") {
      guard let n = UInt64(s) else { throw UsageError("--seed expects a whole number, not \"\(s)\"") }
      seed = n
    }
    if let p = try args.option("--products") {
      guard let n = Int(p), (1...1000).contains(n) else { throw UsageError("--products expects a number from 1 to 1000, not \"\(p)\"") }
      products = n
    }
    store = try args.option("--store")
    reportPath = try args.option("--report") ?? reportPath
    serve = args.flag("--serve")
    if let p = try args.option("--port") {
      guard let n = UInt16(p) else { throw UsageError("--port expects a number from 0 to 65535, not \"\(p)\"") }
      port = n
    }
    if port != nil && !serve { throw UsageError("--port goes with --serve") }
    json = args.flag("--json")
    try args.expectNoMore()
  }

  /// When the story's shop is redesigned: the morning of the second day
  /// (midnight to noon), so that a launch finds it redesigned and a later one
  /// the same day finds it changed back; none in a one-day story.
  static func redesign(days: Int, start: Date) -> Range<Date>? {
    days >= 2 ? start.addingTimeInterval(86_400)..<start.addingTimeInterval(86_400 * 1.5) : nil
  }

  /// The config `forage demo --serve` prints: the shop at `baseURL`.
  static func config(baseURL: String, store: String) -> ForageConfig {
    var fetch = FetchSettings()
    fetch.perHostConcurrency = 8
    fetch.perHostDelay = .zero
    return ForageConfig(
      userAgent: "ForageDemo/1.0 (+https://github.com/forage/forage)", store: store, fetch: fetch,
      tasks: [TaskDefinition(id: "demo.refresh", kind: .appRefresh, budget: .seconds(30), sources: ["catalog"])],
      sources: [catalog(baseURL: baseURL)])
  }

  /// The shop's products, one record each.
  static func catalog(baseURL: String) -> Source {
    Source(
      name: "catalog", url: baseURL + "/",
      extract: [
        "title": "h1.product-title",
        "price": .css("span.price", as: .number),
        "sku": .css("div.product", attr: "data-sku", required: true),
      ],
      match: "div.product", key: ["sku"],
      crawl: CrawlScope(maxDepth: 5, maxPages: 100_000, revisitAfter: .zero))
  }

  /// The story's config: an app refresh task every hour for the catalog and
  /// the news feed, notifications of every change into a file in `folder`.
  static func storyConfig(shop: LiveDemoShop, folder: String) -> ForageConfig {
    var config = DemoCommand.config(baseURL: shop.baseURL, store: folder + "/forage-demo.sqlite")
    config.tasks = [
      TaskDefinition(
        id: "demo.refresh", kind: .appRefresh, every: .seconds(3600), budget: .seconds(30),
        sources: ["catalog", "news"])
    ]
    config.sources.append(Source(name: "news", feed: shop.feedURL))
    config.notify = [NotifyChannel(name: "log", target: .file(folder + "/notifications.jsonl"))]
    return config
  }

  func run(_ out: Terminal) async -> ExitStatus {
    if serve { return await serveOnly(out) }
    // The report goes where the user said, or beside where they are; only a
    // regular file is replaced, once it is complete.
    let report: OutputFile
    do { report = try OutputFile(path: reportPath, protecting: store.map(OutputFile.protectingStore) ?? []) } catch {
      out.error("forage demo", error)
      return .badInput
    }
    let folder = NSTemporaryDirectory() + "forage-demo-" + UUID().uuidString.prefix(8)
    do { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) } catch {
      out.error("forage demo: cannot create \(folder): \(error.localizedDescription)")
      return .jobFailed
    }
    let storePath = store ?? folder + "/forage-demo.sqlite"
    let start = SchedulerDefaults.simulationStart
    let shop: LiveDemoShop
    do {
      shop = try LiveDemoShop(
        products: products, start: start, redesignedDuring: DemoCommand.redesign(days: days, start: start))
    } catch {
      out.error("forage demo: cannot start the demo shop: \(error)")
      return .jobFailed
    }
    defer { shop.stop() }
    let device: DeviceProfile
    do { device = try DeviceProfile.named(orPath: profile) } catch {
      out.error("forage demo", error)
      return .badInput
    }
    let opened: any Store
    do { opened = try Engine.openStore(storePath) } catch {
      out.error("forage demo", error)
      return .badInput
    }
    let config = DemoCommand.storyConfig(shop: shop, folder: folder)
    out.note(
      "Simulating \(days) days of an app on the \(device.name) profile (seed \(seed)): each background launch the "
        + "system grants runs the real job against the demo shop at \(shop.baseURL)/, whose prices and news change "
        + "as simulated time passes. Store: \(storePath)")
    do {
      let result = try await Engine.simulate(
        config: config, store: opened, profile: device, days: Double(days), seed: seed, live: true,
        launchStarts: { shop.setTime($0) })
      let end = start.addingTimeInterval(Double(days) * 86_400)
      var story = try await DemoStory.tell(result: result, store: opened, folder: folder, end: end)
      story.redesign = DemoCommand.redesign(days: days, start: start)
      story.start = start
      var options = HTMLReport.Options()
      options.days = Double(days)
      options.profile = device
      options.seed = seed
      options.title = "Forage demo: \(days) simulated days"
      options.subtitle = storePath
      let html = try await HTMLReport.render(store: opened, config: config, now: end, options: options)
      let writer = try report.open()
      try writer.write(html)
      try writer.commit()
      try await opened.close()
      let reportShown = report.path.hasPrefix("/")
        ? report.path : FileManager.default.currentDirectoryPath + "/" + report.path
      if json {
        out.print(story.json(report: reportShown, store: storePath))
      } else {
        out.print(story.text)
        out.print("\nReport: \(reportShown) (open it in a browser)")
        out.print("Look further: forage status --store \(storePath)")
        out.print("             forage changes --store \(storePath)")
      }
      return .ok
    } catch {
      try? await opened.close()
      out.error("forage demo", error)
      return .jobFailed
    }
  }

  /// `--serve`: the shop as it is on day 0, and a config for it.
  func serveOnly(_ out: Terminal) async -> ExitStatus {
    let listenPort = port ?? DemoCommand.defaultPort
    let server: TestServer
    do { server = try TestServer(site: DemoSite(products: products), port: listenPort) } catch {
      if let e = error as? TestServerError, e.isAddressInUse {
        out.error("forage demo: port \(listenPort) on 127.0.0.1 is already in use; choose another with --port (0 picks a free one)")
        return .badInput
      }
      // The C call and errno only with --verbose.
      out.error(
        "forage demo: cannot start the demo shop on port \(listenPort) of 127.0.0.1"
          + (out.verbose ? "\n  detail: \(error)" : ""))
      return .jobFailed
    }
    defer { server.stop() }
    let config = DemoCommand.config(baseURL: server.baseURL, store: store ?? "forage-demo.sqlite")
    out.print("Demo shop at \(server.baseURL)/ (\(products) products). Config for 'forage run':")
    out.print(config.jsonText)
    out.print("Press Ctrl-C to stop.")
    while true { try? await Task.sleep(for: .seconds(3600)) }
  }
}
