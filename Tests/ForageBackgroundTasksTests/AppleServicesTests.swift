#if os(Linux)
import AppleFrameworksStandIn
import Foundation
import Testing
import Forage
import ForageHTTP
import ForageScheduler
import ForageStore
import ForageSupport
import ForageTestSupport
@testable import ForageBackgroundTasks

/// Local notifications and background-session downloads under the stand-in
/// (issue 18).
extension StandInTests {
  @Suite(.serialized) struct AppleServicesTests {
    @Test func test_presenter_asksOnce_showsEachNotificationOnce_andSaysWhenNotAllowed() async throws {
      freshSystem(permitted: [])
      let center = UNUserNotificationCenter.current()
      center._setAuthorizationAnswer(false)
      #expect(await UserNotificationsPresenter.requestAuthorization() == false)
      let presenter = UserNotificationsPresenter()
      let n = LocalNotification(
        identifier: "msg_1", title: "shop: Lamp changed", body: "price: 12 → 10", threadIdentifier: "shop",
        url: "https://example.com/lamp")
      await #expect(throws: LocalNotificationError.notAllowed) { try await presenter.present(n) }
      #expect(center._delivered.isEmpty)

      center._reset()
      center._setAuthorizationAnswer(true)
      #expect(await UserNotificationsPresenter.requestAuthorization())
      #expect(center._authorizationRequests == [[.alert, .sound, .badge]])
      try await presenter.present(n)
      try await presenter.present(n)  // a retry of the same notification replaces it
      let shown = center._delivered
      #expect(shown.count == 1)
      let request = try #require(shown.first)
      #expect(request.identifier == "msg_1")
      #expect(request.trigger == nil)
      #expect(request.content.title == "shop: Lamp changed")
      #expect(request.content.body == "price: 12 → 10")
      #expect(request.content.threadIdentifier == "shop")
      #expect(request.content.userInfo["url"] as? String == "https://example.com/lamp")
    }

    @Test func test_aPriceChange_isShownOnTheDevice_byTheNextLaunch() async throws {
      freshSystem(permitted: [refreshID])
      UNUserNotificationCenter.current()._setAuthorizationAnswer(true)
      #expect(await UserNotificationsPresenter.requestAuthorization())
      let price = Locked(12)
      let server = try TestServer(routes: [
        "/": Route { _ in
          .html(#"<div class="product" data-sku="lamp"><h1 class="product-title">Lamp</h1><span class="price">$\#(price.withLock { $0 })</span></div>"#)
        }
      ])
      defer { server.stop() }
      var config = shopConfig(server.baseURL, notify: [NotifyChannel(target: .local)])
      config.fetch.robotsTxt = false
      config.sources[0].crawl = nil
      let dir = TemporaryDirectory()
      let engine = Engine(config: config, store: try SQLiteStore(path: dir.file("s.sqlite")))
      let tasks = AppBackgroundTasks(engine: engine, conditions: FixedConditions(.chargingOnWiFi))
      tasks.registerLaunchHandlers()
      try await tasks.scheduleAll()

      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 1 })
      #expect(UNUserNotificationCenter.current()._delivered.isEmpty, "the first crawl notifies nothing")

      price.withLock { $0 = 10 }
      #expect(BGTaskScheduler.shared._simulateLaunchForTaskWithIdentifier(refreshID))
      #expect(await eventually { BGTaskScheduler.shared._completions.count == 2 })
      #expect(BGTaskScheduler.shared._completions.map(\.success) == [true, true])
      let shown = UNUserNotificationCenter.current()._delivered
      #expect(shown.map(\.content.title) == ["catalog: lamp changed"])
      #expect(shown.first?.content.body == "price: 12 → 10")
    }

    @Test func test_backgroundSession_filesLand_andTheCompletionHandlerWaitsForFinishEvents() async throws {
      let report = Array("quarterly report".utf8)
      let photo = [UInt8](repeating: 0xAB, count: 200_000)
      let server = try TestServer(routes: [
        "/files/report.pdf": Route { _ in TestResponse(headers: [("Content-Type", "application/pdf")], body: report) },
        "/files/photo.jpg": Route { _ in TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo) },
        "/files/gone.bin": Route { _ in TestResponse(status: 404, body: Array("no".utf8)) },
      ])
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let folder = dir.file("Downloads")
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      let store = try SQLiteStore(path: dir.file("s.sqlite"))
      let queue = Downloads(store: store, transport: Engine.defaultTransport())
      let a = try await queue.enqueue(server.url("/files/report.pdf"), to: folder)
      let b = try await queue.enqueue(server.url("/files/photo.jpg"), to: folder, expectedSize: photo.count)
      let c = try await queue.enqueue(server.url("/files/gone.bin"), to: folder)

      let downloads = BackgroundDownloads(identifier: "com.example.downloads", store: store)
      let called = Locked(0)
      #expect(!downloads.handleEvents(forBackgroundURLSession: "another.session") { called.withLock { $0 += 1 } })
      #expect(downloads.handleEvents(forBackgroundURLSession: "com.example.downloads") { called.withLock { $0 += 1 } })
      #expect(try await downloads.start() == 3)

      // The transfers end and the files are put in place…
      #expect(try await eventually {
        let states = try await [a.id, b.id, c.id].asyncMap { try await store.download(id: $0)?.state }
        return states == [.done, .done, .failed]
      })
      #expect(try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/report.pdf"))) == report)
      #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/photo.jpg")).count == photo.count)
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["photo.jpg", "report.pdf"])
      // …but iOS's completion handler waits for the end of the session's
      // events: once the work of every finished transfer has ended (and the
      // main queue ran what it was given), it is still kept, not called.
      #expect(await eventually { downloads.events.runningWork(forSession: "com.example.downloads") == 0 })
      await mainQueueDrained()
      #expect(called.withLock { $0 } == 0)
      #expect(downloads.events.isWaiting(forSession: "com.example.downloads"))

      downloads.urlSessionDidFinishEvents(forBackgroundURLSession: downloads.activate())
      #expect(await eventually(10) { called.withLock { $0 } == 1 })
      // Called once: it is no longer kept, so nothing can call it again.
      #expect(!downloads.events.isWaiting(forSession: "com.example.downloads"))
      await mainQueueDrained()
      #expect(called.withLock { $0 } == 1, "called once")
    }
  }
}

extension Array {
  func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
    var out: [T] = []
    for element in self { out.append(try await transform(element)) }
    return out
  }
}
#endif
