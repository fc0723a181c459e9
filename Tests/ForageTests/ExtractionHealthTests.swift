import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// A shop of six product pages whose markup a test changes between
/// launches: as designed, redesigned (the product container renamed), with
/// the price moved to another element, or behind a block page.
final class RedesignedShop: Sendable {
  enum Look: Sendable { case original, renamedContainer, priceMoved, blockPage, gone }
  let look = Locked(Look.original)
  /// Pages that answer with the block page whatever the look.
  let blocked = Locked<Set<Int>>([])
  let server: TestServer

  init() throws {
    let look = self.look
    let blocked = self.blocked
    var routes: [String: Route] = [:]
    for n in 1...6 {
      routes["/p/\(n)"] = Route { _ in
        if blocked.withLock({ $0.contains(n) }) { return .html("<p>Please confirm you are a human.</p>") }
        switch look.withLock({ $0 }) {
        case .original:
          return .html("<div class=product><h1>Product \(n)</h1><span class=price>$\(n * 10)</span></div>")
        case .renamedContainer:
          return .html("<div class=item-card><h2>Product \(n)</h2><b class=cost>$\(n * 10)</b></div>")
        case .priceMoved:
          return .html("<div class=product><h1>Product \(n)</h1><b class=cost>$\(n * 10)</b></div>")
        case .blockPage:
          return .html("<p>Please confirm you are a human.</p>")
        case .gone:
          return .notFound("/p/\(n)")
        }
      }
    }
    server = try TestServer(routes: routes)
  }

  /// A config with one source over the six pages, notifying `receiver`.
  func config(_ receiver: WebhookReceiver, match: String = "div.product") -> ForageConfig {
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    let source = Source(
      name: "shop", urls: (1...6).map { server.url("/p/\($0)") },
      extract: ["title": "h1", "price": .css(".price", as: .number)], match: match)
    var config = ForageConfig(fetch: fetch, sources: [source])
    config.notify = [NotifyChannel(target: .webhook(url: receiver.url, secretEnv: nil))]
    return config
  }
}

/// The shop, a webhook receiver, a store and the shop's config, made for
/// each test (Swift Testing makes a suite instance per test) and stopped
/// after it.
@Suite(.serialized) final class ExtractionHealthTests {
  let shop: RedesignedShop
  let receiver: WebhookReceiver
  let dir = TemporaryDirectory()
  let store: SQLiteStore
  /// The shop's config, notifying `receiver`.
  let config: ForageConfig

  init() throws {
    shop = try RedesignedShop()
    receiver = try WebhookReceiver()
    store = try SQLiteStore(path: dir.file("s.sqlite"))
    config = shop.config(receiver)
  }

  deinit {
    receiver.stop()
    shop.server.stop()
  }

  func types(_ receiver: WebhookReceiver) throws -> [String] {
    try receiver.deliveries.map { d -> String in
      guard case .string(let type)? = try JSONValue.parse(d.body)["type"] else { return "?" }
      return type
    }
  }

  func current(_ store: any Store) async throws -> [StoredRecord] {
    try await allRecords(store).filter { $0.removedAt == nil }
  }

  @Test func test_issue29_redesign_holdsEveryRemoval_alertsOnce_andRecoveryAlertsOnce() async throws {
    #expect(try await launch(config, store).recordsNew == 6)

    shop.look.withLock { $0 = .renamedContainer }
    let held = try await launch(config, store)
    #expect(held.recordsRemoved == 0)
    #expect(try await current(store).count == 6)
    #expect(try types(receiver) == ["source.unhealthy"])
    let alert = try JSONValue.parse(receiver.deliveries[0].body)
    #expect(alert["source"] == .string("shop") && alert["selector"] == .string("div.product"))
    #expect(alert["before"] == .number(6) && alert["now"] == .number(0))
    #expect(held.warnings.contains { $0.hasPrefix("shop: changes held") })
    // The next launch, still redesigned: no second alert.
    try await launch(config, store)
    #expect(try types(receiver) == ["source.unhealthy"])
    let status = try await StoreStatus.gather(store: store, config: config)
    #expect(status.attention.contains { $0.hasPrefix("shop: changes held") && $0.contains("div.product") })

    // The user fixes the config for the new markup: healthy, one recovery.
    var fixed = shop.config(receiver, match: "div.item-card")
    fixed.sources[0].fields = [
      Field(name: "title", rule: "h2"), Field(name: "price", rule: .css(".cost", as: .number)),
    ]
    let recovered = try await launch(fixed, store)
    #expect(recovered.recordsRemoved == 0)
    #expect(try types(receiver).filter { $0.hasPrefix("source.") } == ["source.unhealthy", "source.recovered"])
    #expect(try await StoreStatus.gather(store: store, config: fixed).attention.isEmpty)
    #expect(try await current(store).count == 6)
  }

  @Test func test_issue29_pagesAnswering404_stillRemove() async throws {
    try await launch(config, store)
    shop.look.withLock { $0 = .gone }
    let second = try await launch(config, store)
    #expect(second.recordsRemoved == 6)
    #expect(try await current(store).isEmpty)
    #expect(try types(receiver) == Array(repeating: "record.removed", count: 6))
  }

  @Test func test_issue29_priceMoved_holdsTheChanges_andAcceptAppliesThem() async throws {
    try await launch(config, store)
    shop.look.withLock { $0 = .priceMoved }
    let second = try await launch(config, store)
    #expect(second.recordsChanged == 0)
    #expect(try await current(store).allSatisfy { !$0.fieldsJSON.contains(#""price":null"#) })
    #expect(try types(receiver) == ["source.unhealthy"])
    let alert = try JSONValue.parse(receiver.deliveries[0].body)
    #expect(alert["problem"] == .string("field") && alert["selector"] == .string("price (.price)"))

    let accepted = try await store.acceptHeldChanges(source: "shop", router: NotificationRouter(config: config), now: Date())
    #expect(accepted?.changes.count == 6)
    #expect(try await current(store).allSatisfy { $0.fieldsJSON.contains(#""price":null"#) })
  }

  @Test func test_issue29_blockPage_keepsTheRecords() async throws {
    try await launch(config, store)
    shop.blocked.withLock { $0 = [3] }
    let second = try await launch(config, store)
    #expect(second.recordsRemoved == 0)
    #expect(try await current(store).count == 6)
    #expect(receiver.deliveries.isEmpty)
    // Every page blocked: kept, and one alert.
    shop.look.withLock { $0 = .blockPage }
    try await launch(config, store)
    #expect(try await current(store).count == 6)
    #expect(try types(receiver) == ["source.unhealthy"])
  }
}
