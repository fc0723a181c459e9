import Foundation
import Testing
import ForageTestSupport

/// Two `forage notify` (or `forage download`) processes on one PostgreSQL
/// store deliver each queued notification (download each file) once between
/// them: both are claimed with leases (`SKIP LOCKED`), so neither sends or
/// fetches what the other holds.
@Suite(
  .serialized,
  .enabled(
    if: FleetServer.url != nil || FleetServer.isCI,
    "FORAGE_TEST_POSTGRES_URL is not set: the fleet tests are skipped (scripts/test starts a PostgreSQL server)"))
struct FleetNotifyTests {
  /// The ids of the notifications `delivery` carried: a batch's members', or
  /// the document's own.
  static func notificationIDs(_ delivery: WebhookReceiver.Delivery) -> [String] {
    guard let document = try? JSONSerialization.jsonObject(with: Data(delivery.body)) as? [String: Any] else {
      return []
    }
    if document["type"] as? String == "batch", let members = document["notifications"] as? [[String: Any]] {
      return members.compactMap { $0["id"] as? String }
    }
    return (document["id"] as? String).map { [$0] } ?? []
  }

  /// Runs `forage` with `arguments` in two processes at once; each one's
  /// result, nil where it could not be started.
  static func twice(_ arguments: [String]) -> [CommandResult?] {
    let lock = NSLock()
    nonisolated(unsafe) var results: [CommandResult?] = [nil, nil]
    DispatchQueue.concurrentPerform(iterations: 2) { i in
      let result = try? runForage(arguments)
      lock.withLock { results[i] = result }
    }
    return results
  }

  #if Postgres
  @Test func test_twoNotifyProcesses_deliverEachQueuedNotificationOnce() async throws {
    try await FleetTests.withDatabase { url in
      // Every delivery fails while the run queues them, so they stay pending.
      let receiver = try WebhookReceiver(script: [], then: .fail(status: 500))
      defer { receiver.stop() }
      let items = (1...24).map { (name: "item\($0)", price: 100 + $0) }
      let shop = try NotificationCommandTests.Fixture(
        notify: #"[{"name": "hook", "webhook": "\#(receiver.url)"}]"#, items: items)
      defer { shop.stop() }
      let first = try runForage(["run", "--config", shop.config, "--store", url, "--budget", "60s"])
      #expect(first.status == 0, "\(first.stderr)")
      for item in items { shop.catalogue.set(item.name, price: item.price - 1) }
      let second = try runForage(["run", "--config", shop.config, "--store", url, "--budget", "60s"])
      #expect(second.stdout.contains("notifications: 24 queued"), "\(second.stdout)")
      let failed = receiver.deliveries.count
      #expect(failed > 0 && receiver.accepted.isEmpty)

      // Now the receiver answers, slowly (0.5 s each), so that the second process
      // claims while the first still delivers what it claimed.
      receiver.script([], then: .hang(seconds: 0.5))
      let results = Self.twice(["notify", "--config", shop.config, "--store", url, "--wait", "2m"])
      for result in results {
        let result = try #require(result)
        #expect(result.status == 0, "\(result.stderr)")
      }
      let delivered = receiver.deliveries.dropFirst(failed).flatMap(Self.notificationIDs)
      #expect(delivered.count == 24, "\(delivered.count) notifications delivered, of 24 queued")
      #expect(Set(delivered).count == delivered.count, "a notification was delivered twice")
      let pending = try runForage(["notify", "--config", shop.config, "--store", url, "--json"])
      #expect(pending.stdout.contains(#""pending":0"#), "\(pending.stdout)")
    }
  }

  @Test func test_twoDownloadProcesses_fetchEachFileOnce_andBothSeeEveryFileInPlace() async throws {
    try await FleetTests.withDatabase { url in
      // Each file answers after 0.3 s, so that the two processes overlap.
      let server = try TestServer(routes: [
        "/files/*": Route { request in
          usleep(300_000)
          return .text("the content of \(request.path)\n")
        }
      ])
      defer { server.stop() }
      let dir = TemporaryDirectory()
      let out = dir.file("out")
      try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
      let urls = (1...8).map { server.url("/files/f\($0).txt") }
      let results = Self.twice(["download"] + urls + ["--to", out, "--store", url, "--quiet"])
      let expected = (1...8).map { "f\($0).txt" }.sorted()
      for result in results {
        let result = try #require(result)
        #expect(result.status == 0, "\(result.stderr)")
        let printed = result.stdout.split(separator: "\n").map { String($0.split(separator: "/").last ?? "") }
        #expect(printed.sorted() == expected, "\(result.stdout)")
      }
      let fetched = server.requests.filter { $0.method == "GET" }.map(\.target)
      #expect(fetched.count == 8, "\(fetched.sorted())")
      #expect(Set(fetched).count == fetched.count, "a file was fetched twice: \(fetched.sorted())")
      #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == expected)
      for name in expected {
        let text = try String(contentsOfFile: out + "/" + name, encoding: .utf8)
        #expect(text == "the content of /files/\(name)\n")
      }
    }
  }
  #endif
}
