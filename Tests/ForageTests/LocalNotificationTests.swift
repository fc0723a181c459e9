import Foundation
import Testing
import ForageStore
import ForageSupport
@testable import Forage

/// Shows notifications in memory; refuses them while `allowed` is false.
final class RecordingPresenter: LocalNotificationPresenter, Sendable {
  let shown = Locked<[LocalNotification]>([])
  let allowed: Locked<Bool>
  init(allowed: Bool = true) { self.allowed = Locked(allowed) }
  func present(_ notification: LocalNotification) async throws {
    guard allowed.withLock({ $0 }) else { throw LocalNotificationError.notAllowed }
    shown.withLock { list in
      list.removeAll { $0.identifier == notification.identifier }
      list.append(notification)
    }
  }
}

/// The `local` channel (issue 18): a notification document becomes a
/// notification on the device, through the outbox like every channel.
@Suite(.serialized) struct LocalNotificationTests {
  static func change(_ kind: ChangeKind, before: String?, after: String?) -> RecordChange {
    RecordChange(
      id: 7, source: "shop", key: "Lamp", kind: kind, url: "https://example.com/lamp", beforeJSON: before,
      afterJSON: after, at: Date(timeIntervalSince1970: 1_000), run: nil)
  }

  @Test func test_changedRecord_titleNamesIt_bodyListsTheFields() throws {
    let doc = NotificationPayload.document(
      id: "msg_1", change: Self.change(.changed, before: #"{"name":"Lamp","price":12}"#, after: #"{"name":"Lamp","price":10}"#))
    let n = try #require(LocalNotification(document: Array(doc.serialized().utf8), messageID: "msg_1"))
    #expect(n.identifier == "msg_1")
    #expect(n.title == "shop: Lamp changed")
    #expect(n.body == "price: 12 → 10")
    #expect(n.threadIdentifier == "shop")
    #expect(n.url == "https://example.com/lamp")
  }

  @Test func test_newRecord_andManyFields_areShortened() throws {
    let fields = (1...6).map { "\"f\($0)\":\"v\($0)\"" }.joined(separator: ",")
    let doc = NotificationPayload.document(id: "m", change: Self.change(.new, before: nil, after: "{\(fields)}"))
    let n = try #require(LocalNotification(document: Array(doc.serialized().utf8), messageID: "m"))
    #expect(n.title == "shop: Lamp is new")
    let lines = n.body.split(separator: "\n")
    #expect(lines.count == LocalNotification.maxLines)
    #expect(lines.first == "f1: v1")
    #expect(lines.last == "and 3 more fields")
  }

  @Test func test_batch_showsTheFirstAndCountsTheRest() throws {
    let a = Self.change(.removed, before: #"{"price":3}"#, after: nil)
    let doc = NotificationPayload.batch(id: "b", [("m1", a), ("m2", a), ("m3", a)])
    let n = try #require(LocalNotification(document: Array(doc.serialized().utf8), messageID: "b"))
    #expect(n.title == "shop: Lamp was removed and 2 more")
    #expect(n.identifier == "b")
    #expect(LocalNotification(document: Array("not json".utf8), messageID: "x") == nil)
    #expect(LocalNotification(document: Array(#"{"type":"other"}"#.utf8), messageID: "x") == nil)
  }

  @Test func test_channelWithoutPresenter_failsWithASentence() async {
    let result = await LocalChannel(presenter: nil).deliver(Array("{}".utf8), messageID: "m", at: Date())
    guard case .failed(let why, _) = result else {
      Issue.record("expected a failure, got \(result)")
      return
    }
    #expect(why.contains("only in an app that uses ForageBackgroundTasks"))
  }

  @Test func test_config_localChannel_readsAndWritesBack() throws {
    let text = #"{"notify": [{"local": true}], "sources": [{"name": "s", "url": "https://example.com/"}]}"#
    let config = try ForageConfig.parse(Array(text.utf8))
    #expect(config.notify.map(\.target) == [.local])
    #expect(config.notify.first?.name == "local")
    #expect(try ForageConfig.parse(Array(config.jsonText.utf8)) == config)
    let refused = problems(#"{"notify": [{"local": false}], "sources": [{"name": "s", "url": "https://example.com/"}]}"#)
    #expect(refused.map(\.path) == ["notify[0].local"])
  }

  @Test func test_throughTheOutbox_refusedUntilAllowed_thenShownOnce() async throws {
    let shop = try ChangingShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let config = shop.config([NotifyChannel(target: .local)])
    let presenter = RecordingPresenter(allowed: false)
    let clock = OutboxClock()
    let notifier = Notifier(
      config: config, store: store, transport: Engine.defaultTransport(), firstRetry: .milliseconds(50),
      now: { clock.now() }, localNotifications: presenter)

    try await launch(config, store, notifier: notifier)  // the first crawl notifies nothing
    shop.setPrice("Lamp", 10)
    let second = try await launch(config, store, notifier: notifier)
    #expect(second.notificationsQueued == 1)
    #expect(second.notificationsDelivered == 0, "notifications are not allowed yet")
    #expect(presenter.shown.withLock { $0 }.isEmpty)

    presenter.allowed.withLock { $0 = true }
    clock.advance(by: .seconds(1))  // past the first retry (50 ms)
    let report = try await notifier.deliverDue()
    #expect(report.delivered == 1)
    let shown = presenter.shown.withLock { $0 }
    #expect(shown.map(\.title) == ["shop: Lamp changed"])
    #expect(shown.first?.body == "price: 12 → 10")
    #expect(try await notifier.deliverDue().delivered == 0, "delivered once")
  }
}
