import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import Forage

/// A shop page whose items and prices a test changes between launches.
final class ChangingShop: Sendable {
  let items = Locked<[(name: String, price: Int)]>([("Lamp", 12), ("Desk", 80)])
  let server: TestServer

  init() throws {
    let items = self.items
    server = try TestServer(routes: [
      "/items": Route { _ in
        let rows = items.withLock { $0 }.map {
          "<li class=item><b class=name>\($0.name)</b> <span class=price>$\($0.price)</span></li>"
        }
        return .html("<ul>\(rows.joined())</ul>")
      }
    ])
  }

  func setPrice(_ name: String, _ price: Int) {
    items.withLock { list in
      if let i = list.firstIndex(where: { $0.name == name }) { list[i].price = price }
    }
  }

  func remove(_ name: String) { items.withLock { $0.removeAll { $0.name == name } } }

  /// A config with one source over the page and `channels`.
  func config(_ channels: [NotifyChannel], notifyWhen: [ChangeCondition]? = nil) -> ForageConfig {
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    fetch.perHostDelay = .zero
    var source = Source(
      name: "shop", url: server.url("/items"), extract: ["name": ".name", "price": .css(".price", as: .number)],
      items: ".item", key: ["name"])
    source.notifyWhen = notifyWhen
    var config = ForageConfig(fetch: fetch, sources: [source])
    config.notify = channels
    return config
  }
}

/// The outbox clock a test hands a `Notifier` (`now:`): the wall clock
/// plus an offset the test moves forward, so a retry or an age limit is
/// passed by advancing it, never by waiting. Only ever ahead of the wall
/// clock: what a launch stamps with the real time is in its past.
final class OutboxClock: Sendable {
  private let offset = Locked<TimeInterval>(0)

  /// The clock's time now.
  func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

  /// Moves the clock `duration` forward.
  func advance(by duration: Duration) {
    offset.withLock { $0 += Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18 }
  }
}

/// Runs one launch of `config` on `store`.
@discardableResult
func launch(
  _ config: ForageConfig, _ store: any Store, budget: Duration = .seconds(20), notifier: Notifier? = nil
) async throws -> RunSummary {
  try await Job(config: config, store: store, transport: Engine.defaultTransport(), notifier: notifier)
    .run(budget: budget)
}

@Suite(.serialized) struct NotificationDeliveryTests {
  @Test func test_firstCrawl_notifiesNothing_thenAChangeIsDeliveredOnce() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver()
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(target: .webhook(url: receiver.url, secretEnv: nil))])

    let first = try await launch(config, store)
    #expect(first.recordsNew == 2 && first.notificationsQueued == 0)
    #expect(receiver.deliveries.isEmpty)

    shop.setPrice("Lamp", 10)
    let second = try await launch(config, store)
    #expect(second.notificationsQueued == 1 && second.notificationsDelivered == 1)
    let delivery = try #require(receiver.deliveries.first)
    #expect(receiver.deliveries.count == 1)
    #expect(delivery.contentType == "application/json")
    #expect(delivery.signature == nil)
    let body = try JSONValue.parse(delivery.body)
    #expect(body["type"] == .string("record.changed"))
    #expect(body["id"] == delivery.id.map(JSONValue.string))
    #expect(body["key"] == .string("Lamp"))
    #expect(body["changes"] == .array([.object([("field", .string("price")), ("before", .number(12)), ("after", .number(10))])]))
    #expect(try await store.notificationCounts(now: Date()).delivered == 1)
  }

  @Test func test_failingReceiver_isRetriedWithTheSameID_untilItRecovers() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(script: [.fail(status: 500), .reset, .throttle(retryAfter: 1)])
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(name: "hook", target: .webhook(url: receiver.url, secretEnv: nil))])
    let clock = OutboxClock()
    let notifier = Notifier(
      config: config, store: store, transport: Engine.defaultTransport(), firstRetry: .milliseconds(200),
      now: { clock.now() })
    try await launch(config, store, notifier: notifier)
    shop.setPrice("Lamp", 10)
    shop.remove("Desk")
    let second = try await launch(config, store, notifier: notifier)
    #expect(second.notificationsQueued == 2)
    #expect(second.notificationsFailed >= 1)

    // Deliver as retries come due (the clock moved past each); every
    // notable change arrives.
    for _ in 0..<40 where try await store.notificationCounts(now: clock.now()).pending > 0 {
      clock.advance(by: .seconds(60))
      try await notifier.deliverDue()
    }
    #expect(try await store.notificationCounts(now: clock.now()).pending == 0)
    let types = receiver.accepted.compactMap { try? JSONValue.parse($0.body)["type"] }
    #expect(Set(types) == [.string("record.changed"), .string("record.removed")])
    // Every attempt of one notification carried its id: the failed ones'
    // ids are among the accepted ones.
    let acceptedIDs = Set(receiver.accepted.compactMap(\.id))
    #expect(acceptedIDs.count == 2)
    #expect(Set(receiver.deliveries.compactMap(\.id)) == acceptedIDs)
    #expect(receiver.deliveries.count >= 4)
  }

  @Test func test_hangingReceiver_doesNotHoldTheLaunchPastItsBudget_andLosesNothing() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(then: .hang(seconds: 120))
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(target: .webhook(url: receiver.url, secretEnv: nil), timeout: .seconds(60))])
    try await launch(config, store)
    shop.setPrice("Lamp", 10)
    let clock = ContinuousClock()
    let started = clock.now
    let summary = try await launch(config, store, budget: .seconds(3))
    // Generous: proves the launch did not wait for the 60 s webhook timeout.
    #expect(clock.now - started < .seconds(30))
    #expect(summary.notificationsQueued == 1 && summary.notificationsDelivered == 0)
    let hungID = try #require(receiver.deliveries.first?.id)

    // The notification is pending, not lost; a recovered receiver gets it with the same id.
    #expect(try await store.notificationCounts(now: Date()).pending == 1)
    receiver.script([], then: .accept)
    let report = try await Notifier(config: config, store: store, transport: Engine.defaultTransport()).deliverDue()
    #expect(report.delivered == 1)
    #expect(receiver.accepted.map(\.id) == [hungID])
  }

  @Test func test_notifyWhen_decides_whatIsNotable() async throws {
    let shop = try ChangingShop()
    let dir = TemporaryDirectory()
    defer { shop.server.stop() }
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let out = dir.file("notes.jsonl")
    let config = shop.config(
      [NotifyChannel(target: .file(out))], notifyWhen: [.field("price", .decreases), .kind(.removed)])
    try await launch(config, store)
    shop.setPrice("Lamp", 15)  // up: not notable
    try await launch(config, store)
    shop.setPrice("Lamp", 9)  // down: notable
    shop.remove("Desk")  // removed: notable
    try await launch(config, store)
    let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
    let docs = try lines.map { try JSONValue.parse(String($0)) }
    #expect(docs.map { $0["type"] } == [.string("record.changed"), .string("record.removed")])
    #expect(docs[0]["after"]?["price"] == .number(9))
    #expect(docs[1]["key"] == .string("Desk") && docs[1]["after"] == .null)
  }

  @Test func test_gone_turnsTheChannelOff_untilItsURLChanges() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(script: [.gone])
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(name: "hook", target: .webhook(url: receiver.url, secretEnv: nil))])
    try await launch(config, store)
    shop.setPrice("Lamp", 10)
    shop.remove("Desk")
    try await launch(config, store)
    // The first answer was 410: both notifications are dead, none sent after it.
    #expect(receiver.deliveries.count == 1)
    let counts = try await store.notificationCounts(now: Date())
    #expect(counts.dead == 2 && counts.pending == 0)
    #expect(try await store.disabledChannels().map(\.name) == ["hook"])
    let dead = try await store.notifications(state: .dead, limit: 10)
    #expect(dead.allSatisfy { $0.lastError?.contains("410") == true })

    // The same URL stays off; a new one turns the channel on again.
    shop.setPrice("Lamp", 8)
    try await launch(config, store)
    #expect(receiver.deliveries.count == 1)
    let moved = shop.config([NotifyChannel(name: "hook", target: .webhook(url: receiver.url + "?v=2", secretEnv: nil))])
    shop.setPrice("Lamp", 7)
    try await launch(moved, store)
    #expect(receiver.accepted.count == 1)
    #expect(try await store.disabledChannels().isEmpty)
  }

  @Test func test_tooOld_isDead_andAChannelNoLongerConfiguredToo() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(then: .fail(status: 503))
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([
      NotifyChannel(name: "a", target: .webhook(url: receiver.url, secretEnv: nil), maxAge: .milliseconds(300)),
      NotifyChannel(name: "b", target: .file(dir.file("b.jsonl"))),
    ])
    let clock = OutboxClock()
    let notifier = Notifier(
      config: config, store: store, transport: Engine.defaultTransport(), firstRetry: .milliseconds(100),
      now: { clock.now() })
    try await launch(config, store, notifier: notifier)
    shop.setPrice("Lamp", 10)
    try await launch(config, store, notifier: notifier)
    clock.advance(by: .seconds(1))  // past the channel's maxAge (300 ms)
    let report = try await notifier.deliverDue()
    #expect(report.dead == 1)
    #expect(report.problems.contains { $0.hasPrefix("a: not delivered within") })

    // Channel "b" is dropped from the config with a notification pending.
    shop.setPrice("Lamp", 9)
    let onlyA = shop.config([NotifyChannel(name: "a", target: .webhook(url: receiver.url, secretEnv: nil))])
    var withB = config
    withB.notify = config.notify
    try await launch(withB, store, budget: .seconds(20), notifier: Notifier(config: onlyA, store: store, transport: Engine.defaultTransport()))
    let dead = try await store.notifications(state: .dead, limit: 10)
    #expect(dead.contains { $0.channel == "b" && $0.lastError?.contains("no channel named \"b\"") == true })
  }

  @Test func test_batchChannel_sendsOneBatch_withAStableID() async throws {
    let shop = try ChangingShop()
    let receiver = try WebhookReceiver(script: [.fail(status: 500)])
    defer { receiver.stop(); shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(target: .webhook(url: receiver.url, secretEnv: nil), batch: true)])
    let clock = OutboxClock()
    let notifier = Notifier(
      config: config, store: store, transport: Engine.defaultTransport(), firstRetry: .milliseconds(100),
      now: { clock.now() })
    try await launch(config, store, notifier: notifier)
    shop.setPrice("Lamp", 10)
    shop.setPrice("Desk", 70)
    // Both changes commit together (one page), so one round sees both.
    try await launch(config, store, notifier: notifier)
    for _ in 0..<30 where try await store.notificationCounts(now: clock.now()).pending > 0 {
      clock.advance(by: .seconds(60))
      try await notifier.deliverDue()
    }
    #expect(try await store.notificationCounts(now: clock.now()).pending == 0)
    #expect(receiver.deliveries.count == 2)
    #expect(receiver.deliveries[0].id == receiver.deliveries[1].id)
    let batch = try JSONValue.parse(receiver.accepted[0].body)
    #expect(batch["type"] == .string("batch"))
    guard case .array(let members)? = batch["notifications"] else { Issue.record("no notifications array"); return }
    #expect(members.count == 2)
    #expect(receiver.deliveries[0].id?.hasPrefix("msg_batch_") == true)
  }

  @Test func test_webhookSignature_isStandardWebhooks() throws {
    // The published example of the Standard Webhooks specification.
    let key = try #require(Data(base64Encoded: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
    let signature = WebhookChannel.signature(
      key: Array(key), messageID: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330,
      body: Array(#"{"test": 2432232314}"#.utf8))
    #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    // Secrets are read from the environment only, and problems never show them.
    let missing = WebhookChannel.secret(named: "HOOK", in: [:])
    let bad = WebhookChannel.secret(named: "HOOK", in: ["HOOK": "whsec_not base64!!"])
    guard case .failure(let a) = missing, case .failure(let b) = bad else {
      Issue.record("expected failures")
      return
    }
    #expect(a.message.contains("HOOK") && a.message.contains("not set"))
    #expect(!b.message.contains("not base64"))
    #expect(try WebhookChannel.secret(named: "HOOK", in: ["HOOK": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"]).get() == Array(key))
  }

  @Test func test_backoff_growsWithJitter_andIsCapped() {
    let first = Notifier.backoff(attempt: 0, random: 1)
    #expect(first == EngineDefaults.notifyFirstRetry)
    #expect(Notifier.backoff(attempt: 3, random: 1) == EngineDefaults.notifyFirstRetry * 8)
    #expect(Notifier.backoff(attempt: 0, random: 0.5) == EngineDefaults.notifyFirstRetry / 2)
    #expect(Notifier.backoff(attempt: 40, random: 1) == EngineDefaults.notifyLongestRetry)
  }

  @Test func test_export_leavesOutRemovedRecords_changesKeepThem() async throws {
    let shop = try ChangingShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([])
    try await launch(config, store)
    shop.remove("Desk")
    let summary = try await launch(config, store)
    #expect(summary.recordsRemoved == 1 && summary.sources[0].recordsRemoved == 1)
    var text = ""
    let count = try await Exporter(store: store).export(format: .jsonl) { text += $0 }
    #expect(count == 1 && text.contains("Lamp") && !text.contains("Desk"))
    let removed = try await store.changes(matching: ChangeQuery(kinds: [.removed]))
    #expect(removed.map(\.key) == ["Desk"])
  }

  @Test func test_fileChannel_refusesWhatIsNotARegularFile() async {
    let dir = TemporaryDirectory()
    let channel = FileChannel(path: dir.path)
    let result = await channel.deliver(Array("{}".utf8), messageID: "msg_x", at: Date())
    guard case .failed(let why, _) = result else {
      Issue.record("a folder was accepted")
      return
    }
    #expect(why.contains("not a regular file"))
  }
}
