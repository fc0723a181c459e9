import Foundation
import Testing
import ForageStore
@testable import Forage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 31: the pieces of the daemon as a service that need no process:
/// the reload's change list, the Prometheus writer, sd_notify's datagrams.
@Suite struct DaemonServiceTests {
  static func config(tasks: String, sources: String = #"[{"name": "a", "url": "https://example.com/"}]"#) throws -> ForageConfig {
    try ForageConfig.parse(Array(#"{"tasks": \#(tasks), "sources": \#(sources)}"#.utf8))
  }

  @Test func test_issue31_configChange_namesTasksAddedRemovedAndChanged() throws {
    let old = try Self.config(tasks: """
      [{"id": "keep", "every": "1h", "sources": ["a"]}, {"id": "slower", "every": "1h", "sources": ["a"]},
       {"id": "drop", "every": "1h", "sources": ["a"]}]
      """)
    let new = try Self.config(tasks: """
      [{"id": "keep", "every": "1h", "sources": ["a"]}, {"id": "slower", "every": "2h", "sources": ["a"]},
       {"id": "fresh", "every": "1h", "sources": ["a"]}]
      """)
    let change = DaemonConfigChange(from: old, to: new)
    #expect(change.added == ["fresh"] && change.removed == ["drop"] && change.changed == ["slower"])
    #expect(change.summary == "tasks added: fresh; removed: drop; changed: slower")
    #expect(DaemonConfigChange(from: old, to: old).summary == "nothing changed")
    // A changed source changes every task that runs it.
    let moved = try Self.config(
      tasks: """
        [{"id": "keep", "every": "1h", "sources": ["a"]}, {"id": "slower", "every": "1h", "sources": ["a"]},
         {"id": "drop", "every": "1h", "sources": ["a"]}]
        """, sources: #"[{"name": "a", "url": "https://example.org/"}]"#)
    let sourceChange = DaemonConfigChange(from: old, to: moved)
    #expect(sourceChange.sources == ["a"] && sourceChange.changed == ["keep", "slower", "drop"])
  }

  @Test func test_issue31_prometheusText_escapesLabelValuesAndHelp() {
    var text = PrometheusText()
    text.family("m_total", .counter, "Help with \\ and\nnewline.", [([("source", #"a "b" \c"# + "\nd")], 3), ([], 0.25)])
    #expect(text.text == """
      # HELP m_total Help with \\\\ and\\nnewline.
      # TYPE m_total counter
      m_total{source="a \\"b\\" \\\\c\\nd"} 3
      m_total 0.250

      """)
  }

  @Test func test_issue31_metricsPage_countsLaunchesPagesAndRecords_andListsEveryConfiguredSeries() throws {
    let config = try Self.config(tasks: #"[{"id": "t", "every": "1h", "sources": ["a"]}]"#)
    let metrics = DaemonMetrics()
    var summary = RunSummary()
    summary.outcome = .completed
    var source = SourceRunSummary(name: "a")
    source.pagesFetched = 3
    source.pagesFailed = 1
    source.recordsNew = 2
    summary.sources = [source]
    metrics.record(task: "t", summary: summary)
    metrics.record(task: "t", summary: summary)
    metrics.record(task: "t", summary: nil)
    let now = Date()
    let status = StoreStatus(
      at: now, tasks: [],
      sources: [
        StoreStatus.SourceStatus(
          name: "a", records: 2, removed: 0, newestData: now.addingTimeInterval(-90), lastCompletedCrawl: nil,
          changesLastDay: 0, lastLaunchPages: nil, lastLaunchFailures: nil, failingLaunches: 0, errors: [])
      ], notifications: StoreStatus.Outbox(pending: 4, dead: 1), attention: ["something"])
    let page = metrics.page(status: status, config: config)
    let lines = Set(page.split(separator: "\n").map(String.init))
    for expected in [
      #"forage_launches_total{task="t",outcome="completed"} 2"#, #"forage_launches_total{task="t",outcome="failed"} 1"#,
      #"forage_pages_total{source="a",result="fetched"} 6"#, #"forage_pages_total{source="a",result="failed"} 2"#,
      #"forage_pages_total{source="a",result="not_modified"} 0"#, #"forage_records_total{source="a",change="new"} 4"#,
      #"forage_records_total{source="a",change="removed"} 0"#, #"forage_source_data_age_seconds{source="a"} 90"#,
      #"forage_notifications{state="pending"} 4"#, #"forage_notifications{state="dead"} 1"#, "forage_healthy 0",
    ] {
      #expect(lines.contains(expected), "\(expected) not in:\n\(page)")
    }
  }

  /// A datagram socket bound at `address` (a path, or a NUL-led abstract name).
  static func bindDatagram(_ name: [UInt8]) -> Int32 {
    #if os(Linux)
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    #else
    let fd = socket(AF_UNIX, SOCK_DGRAM, 0)
    #endif
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in name.enumerated() { raw[i] = b } }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count + (name.first == 0 ? 0 : 1)
    let ok = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(length)) }
    }
    return ok == 0 ? fd : -1
  }

  static func receive(_ fd: Int32) -> String? {
    var buffer = [UInt8](repeating: 0, count: 512)
    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
  }

  @Test func test_issue31_systemdNotifier_sendsToAPathOrAnAbstractName_andIsANoOpWithoutNotifySocket() throws {
    let path = NSTemporaryDirectory() + "forage-notify-\(UUID().uuidString.prefix(8)).sock"
    let fd = Self.bindDatagram(Array(path.utf8))
    #expect(fd >= 0)
    defer {
      close(fd)
      unlink(path)
    }
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "30000000"])
    #expect(notifier.watchdogInterval == .seconds(30))
    #expect(notifier.send("READY=1"))
    #expect(notifier.send("STATUS=next launch: t now"))
    #expect(Self.receive(fd) == "READY=1")
    #expect(Self.receive(fd) == "STATUS=next launch: t now")

    #if os(Linux)
    let name = "forage-test-\(UUID().uuidString.prefix(8))"
    let abstract = Self.bindDatagram([0] + Array(name.utf8))
    #expect(abstract >= 0)
    defer { close(abstract) }
    #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name]).send("WATCHDOG=1"))
    #expect(Self.receive(abstract) == "WATCHDOG=1")
    #endif

    let none = SystemdNotifier(environment: [:])
    #expect(!none.isEnabled && none.watchdogInterval == nil)
    #expect(!none.send("READY=1"))
    // A watchdog meant for another process is not ours.
    #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": path, "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"]).watchdogInterval == nil)
  }
}
