import Foundation
import Testing
import ForageStore
import ForageTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `command` channel's programs as the CLI runs them (issue 25): none
/// outlives Forage, whatever signal ends it.
@Suite(.serialized) struct CommandChildTests {
  /// A page of two items, and a config whose first crawl notifies both
  /// through a command that writes "its pid and its child's pid" to
  /// `pids`, then sleeps 30 s.
  static func setUp(_ dir: TemporaryDirectory) throws -> (server: TestServer, config: String, pids: String) {
    let server = try TestServer(routes: [
      "/items": Route { _ in .html("<ul><li class=item><b>Lamp</b></li><li class=item><b>Desk</b></li></ul>") }
    ])
    let pids = dir.file("pids")
    let config = try dir.write(
      "forage.json",
      """
      {"fetch": {"robotsTxt": false, "perHostDelay": "0s"},
       "tasks": [{"id": "t", "kind": "processing", "every": "1h", "budget": "120s", "sources": ["shop"]}],
       "sources": [{"name": "shop", "url": "\(server.url("/items"))", "items": ".item", "key": ["name"],
                    "extract": {"name": "b"}, "notifyWhen": [{"kind": "new"}]}],
       "notify": [{"command": ["sh", "-c", "sleep 30 & echo $$ $! > '\(pids)'; wait"], "timeout": "60s"}]}
      """)
    return (server, config, pids)
  }

  /// Starts `forage` with `arguments`, its output in files of `dir`.
  static func start(_ arguments: [String], in dir: TemporaryDirectory) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = arguments
    _ = FileManager.default.createFile(atPath: dir.file("stdout"), contents: nil)
    _ = FileManager.default.createFile(atPath: dir.file("stderr"), contents: nil)
    p.standardOutput = FileHandle(forWritingAtPath: dir.file("stdout"))
    p.standardError = FileHandle(forWritingAtPath: dir.file("stderr"))
    try p.run()
    return p
  }

  /// The two pids the command wrote, waiting up to a minute for them.
  static func waitForPids(_ file: String) async throws -> [pid_t] {
    let started = Date()
    while Date().timeIntervalSince(started) < 60 {
      if let text = try? String(contentsOfFile: file, encoding: .utf8), text.hasSuffix("\n") {
        let pids = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { pid_t($0) }
        if pids.count == 2 { return pids }
      }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw CocoaError(.fileNoSuchFile)
  }

  /// True once no process `pid` runs (an exited one waiting to be reaped
  /// counts as gone), within 5 s: a killed program is reparented to init
  /// and reaped there, a moment after its signal. The old code left it
  /// sleeping for 30 s.
  static func isGone(_ pid: pid_t) async -> Bool {
    let started = Date()
    repeat {
      if processIsGone(pid) { return true }
      try? await Task.sleep(for: .milliseconds(50))
    } while Date().timeIntervalSince(started) < 5
    return processIsGone(pid)
  }

  static func processIsGone(_ pid: pid_t) -> Bool {
    #if os(Linux)
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return true }
    let state = stat[stat.index(after: close)...].drop(while: { $0 == " " }).first
    return state == "Z" || state == "X"
    #else
    return kill(pid, 0) != 0 && errno == ESRCH
    #endif
  }

  /// Both notifications wait in the store as they were before the attempt.
  static func expectBothPending(_ storePath: String) async throws {
    let store = try SQLiteStore(path: storePath)
    let pending = try await store.notifications(state: .pending, limit: 10)
    #expect(pending.count == 2)
    for n in pending { #expect(n.attempts == 0, "\(n)") }
    try await store.close()
  }

  @Test func test_issue25_run_secondSIGINT_killsTheCommandsProcessGroup_beforeQuitting() async throws {
    let dir = TemporaryDirectory()
    let (server, config, pidFile) = try Self.setUp(dir)
    defer { server.stop() }
    let store = dir.file("s.sqlite")
    let p = try Self.start(["run", "--config", config, "--store", store, "--budget", "120s"], in: dir)
    let pids = try await Self.waitForPids(pidFile)
    kill(p.processIdentifier, SIGINT)
    // The second signal once the first one was heard (its line printed),
    // so that it is the second one.
    let heard = Date()
    while Date().timeIntervalSince(heard) < 60, p.isRunning,
      (try? String(contentsOfFile: dir.file("stderr"), encoding: .utf8))?.contains("forage run: SIGINT: ") != true
    {
      try await Task.sleep(for: .milliseconds(20))
    }
    kill(p.processIdentifier, SIGINT)
    p.waitUntilExit()
    let stderr = try String(contentsOfFile: dir.file("stderr"), encoding: .utf8)
    #expect(p.terminationStatus == 130, "\(stderr)")
    #expect(stderr.contains("again: quitting now"), "\(stderr)")
    for pid in pids { #expect(await Self.isGone(pid), "process \(pid) outlived forage run") }
    try await Self.expectBothPending(store)
  }

  /// SIGKILL runs no code of ours: the kernel kills the program itself
  /// (its parent-death signal, set through setpriv); the programs it
  /// started are not covered (see ParentDeath).
  @Test(.enabled(if: ParentDeathProbe.available, "no setpriv with --pdeathsig on this machine"))
  func test_run_SIGKILL_theCommandDiesWithForage() async throws {
    let dir = TemporaryDirectory()
    let (server, config, pidFile) = try Self.setUp(dir)
    defer { server.stop() }
    let p = try Self.start(["run", "--config", config, "--store", dir.file("k.sqlite"), "--budget", "120s"], in: dir)
    let pids = try await Self.waitForPids(pidFile)
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    #expect(await Self.isGone(pids[0]), "the command \(pids[0]) outlived a SIGKILLed forage run")
    // Its own background child is not covered: stop it here.
    kill(pids[1], SIGKILL)
  }

  @Test func test_issue25_daemon_SIGTERM_leavesNoCommandRunning() async throws {
    let dir = TemporaryDirectory()
    let (server, config, pidFile) = try Self.setUp(dir)
    defer { server.stop() }
    let store = dir.file("d.sqlite")
    let p = try Self.start(["daemon", "--config", config, "--store", store], in: dir)
    let pids = try await Self.waitForPids(pidFile)
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    let stderr = try String(contentsOfFile: dir.file("stderr"), encoding: .utf8)
    #expect(p.terminationStatus == 0, "\(stderr)")
    // The launch obeyed its expiration: it was not abandoned after the grace.
    #expect(!stderr.contains("ignored its expiration"), "\(stderr)")
    for pid in pids { #expect(await Self.isGone(pid), "process \(pid) outlived forage daemon") }
    try await Self.expectBothPending(store)
  }
}

/// Whether this machine has a `setpriv` that knows `--pdeathsig` (what
/// makes a command die with a SIGKILLed Forage on Linux).
enum ParentDeathProbe {
  static let available: Bool = {
    #if os(Linux)
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    p.arguments = ["--pdeathsig", "KILL", "--", "/usr/bin/setpriv", "--help"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
    #else
    return false
    #endif
  }()
}
