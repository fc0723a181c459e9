import Foundation
import Testing
import ForageHTTP
import ForageStore
import ForageTestSupport
@testable import Forage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A command channel's program when a launch stops (issue 25): abandoned
/// after the grace, killed, its notification left pending.
@Suite(.serialized) struct NotificationStopTests {
  /// A program that writes "its pid and its sleeping child's pid" to
  /// `pidFile`, then waits 30 s for the child (both ignoring SIGTERM when
  /// `ignoresTerm`, so that only SIGKILL ends them).
  static func sleeper(_ pidFile: String, ignoresTerm: Bool) -> [String] {
    ["sh", "-c", (ignoresTerm ? "trap '' TERM; " : "") + "sleep 30 & echo $$ $! > '\(pidFile)'; wait"]
  }

  /// The pids `sleeper` wrote, once the line is whole.
  static func pids(in file: String) -> [pid_t]? {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8), text.hasSuffix("\n") else { return nil }
    let pids = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
    return pids.count == 2 ? pids : nil
  }

  /// True when no process `pid` runs (one that has exited and waits to be
  /// reaped by init counts as gone), within `patience`: a killed grandchild
  /// is reparented and reaped by others, a moment after the signal.
  static func isGone(_ pid: pid_t, patience: Duration = .seconds(5)) async -> Bool {
    let clock = ContinuousClock()
    let started = clock.now
    repeat {
      if processIsGone(pid) { return true }
      try? await Task.sleep(for: .milliseconds(50))
    } while clock.now - started < patience
    return processIsGone(pid)
  }

  static func processIsGone(_ pid: pid_t) -> Bool {
    #if os(Linux)
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    // "pid (name) S …": the state follows the last ")".
    guard let close = stat.lastIndex(of: ")") else { return true }
    let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
    return state == "Z" || state == "X"
    #else
    return kill(pid, 0) != 0 && errno == ESRCH
    #endif
  }

  @Test(arguments: [false, true])
  func test_issue25_stopRequest_abandonsACommandDelivery_afterTheGrace_andLeavesItPending(ignoresTerm: Bool)
    async throws
  {
    let shop = try ChangingShop()
    defer { shop.server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    let pidFile = dir.file("pids")
    // The first crawl's two new records notify; the first one's program
    // sleeps 30 s, far past the grace.
    let channel = NotifyChannel(
      target: .command(Self.sleeper(pidFile, ignoresTerm: ignoresTerm)), timeout: .seconds(60))
    let config = shop.config([channel], notifyWhen: [.kind(.new)])
    let stop = StopRequest()
    let clock = ContinuousClock()
    // Stops the launch once the program runs (waiting at most a minute for it).
    let stopper = Task { () -> (ContinuousClock.Instant, [pid_t])? in
      let started = clock.now
      while clock.now - started < .seconds(60) {
        if let pids = Self.pids(in: pidFile) {
          stop.request()
          return (clock.now, pids)
        }
        try? await Task.sleep(for: .milliseconds(20))
      }
      stop.request()
      return nil
    }
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(120), stop: stop)
    let (stoppedAt, pids) = try #require(await stopper.value, "the command's program never started")
    let took = clock.now - stoppedAt

    // The program and its child were killed (SIGTERM to the group after the
    // grace, SIGKILL a second later), not waited for.
    for pid in pids { #expect(await Self.isGone(pid), "process \(pid) outlived the stop") }
    #expect(ChildProcesses.running.isEmpty)
    // Generous (the grace is 2 s, SIGKILL comes 1 s later): the old loop
    // waited out the 30 s program, then ran the next one.
    #expect(took < .seconds(15), "delivery took \(took) after the stop")

    // Abandoned, not failed: both notifications are pending as they were,
    // attempts not counted, no error recorded, no claim left.
    #expect(summary.notificationsDelivered == 0)
    #expect(summary.notificationsFailed == 0)
    let pending = try await store.notifications(state: .pending, limit: 10)
    #expect(pending.count == 2)
    for n in pending {
      #expect(n.attempts == 0, "\(n)")
      #expect(n.lastError == nil, "\(n)")
    }
    let again = try await store.claimNotifications(limit: 10, lease: Lease(owner: "t", for: .seconds(60), at: Date()))
    #expect(again.count == 2, "a claim was left behind")
  }
}

extension NotificationStopTests {
  /// The issue's 180 quick notifications: delivery went on after the stop,
  /// one after another. The receiver asks for the stop as the first one
  /// arrives and accepts it: that one is delivered, no other is attempted.
  @Test func test_issue25_stopRequest_startsNoFurtherDelivery() async throws {
    let stop = StopRequest()
    let names = (1...20).map { "item\($0)" }
    let server = try TestServer(routes: [
      "/items": Route { _ in .html("<ul>\(names.map { "<li class=item><b>\($0)</b></li>" }.joined())</ul>") },
      "/hook": Route { _ in
        stop.request()
        return TestResponse(status: 204, body: [])
      },
    ])
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let store = try SQLiteStore(path: dir.file("s.sqlite"))
    var fetch = FetchSettings()
    fetch.robotsTxt = false
    var source = Source(name: "shop", url: server.url("/items"), extract: ["name": "b"], items: ".item", key: ["name"])
    source.notifyWhen = [.kind(.new)]
    var config = ForageConfig(fetch: fetch, sources: [source])
    config.notify = [NotifyChannel(target: .webhook(url: server.url("/hook"), secretEnv: nil))]
    let summary = try await Job(config: config, store: store, transport: Engine.defaultTransport())
      .run(budget: .seconds(120), stop: stop)
    #expect(server.requestCount(path: "/hook") == 1)
    #expect(summary.notificationsDelivered == 1)
    #expect(summary.notificationsFailed == 0)
    let counts = try await store.notificationCounts(now: Date())
    #expect(counts.delivered == 1 && counts.pending == 19, "\(counts)")
  }
}
