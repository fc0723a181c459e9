import Foundation
import Testing
import ForageStore
import ForageTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 31: `forage daemon` as a service (service files, sd_notify, SIGHUP,
/// JSON logs, metrics and health).
@Suite(.serialized) struct ServiceTests {
  static func config(_ base: String, tasks: String? = nil) -> String {
    """
    {"fetch": {"perHostDelay": "0s", "timeout": "2s", "retries": 0},
     "tasks": \(tasks ?? #"[{"id": "t.refresh", "kind": "appRefresh", "every": "1h", "budget": "10s", "sources": ["catalog"]}]"#),
     "sources": [{"name": "catalog", "url": "\(base)/", "crawl": {"revisitAfter": "0s"},
                  "match": "div.product", "key": ["sku"],
                  "extract": {"sku": {"css": "div.product", "attr": "data-sku"}}}]}
    """
  }

  // MARK: - Service files

  /// `[Section]` → key → values (a key may repeat), read strictly: every
  /// line is a comment, a section header or `Key=value` inside a section.
  static func parseUnit(_ text: String) throws -> [String: [String: [String]]] {
    var sections: [String: [String: [String]]] = [:]
    var current: String?
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces)
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("[") {
        guard line.hasSuffix("]") else { throw UnitError(line: number + 1, text: line) }
        current = String(line.dropFirst().dropLast())
        continue
      }
      guard let section = current, let eq = line.firstIndex(of: "="),
            line[..<eq].allSatisfy({ $0.isLetter || $0.isNumber })
      else { throw UnitError(line: number + 1, text: line) }
      sections[section, default: [:]][String(line[..<eq]), default: []].append(String(line[line.index(after: eq)...]))
    }
    return sections
  }

  struct UnitError: Error { var line: Int, text: String }

  @Test func test_issue31_initServiceSystemd_writesANotifyUnitWithAbsolutePaths_thatParses() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config("http://127.0.0.1:9"))
    for scope in ["user", "system"] {
      let unitPath = dir.file("forage-\(scope).service")
      let r = try runForage(
        ["init", "--service", "systemd", "--config", "forage.json", "--output", unitPath] + (scope == "system" ? ["--system"] : []),
        in: dir.path)
      #expect(r.status == 0, "\(r.stderr)")
      let text = try String(contentsOfFile: unitPath, encoding: .utf8)
      let unit = try ServiceTests.parseUnit(text)
      let service = try #require(unit["Service"])
      #expect(service["Type"] == ["notify"])
      #expect(service["Restart"] == ["on-failure"])
      #expect(service["WatchdogSec"] == ["60s"])
      #expect(service["ExecReload"] == ["/bin/kill -HUP $MAINPID"])
      #expect(service["NoNewPrivileges"] == ["yes"])
      #expect(service["ProtectSystem"] == ["strict"])
      let folder = URL(fileURLWithPath: config).resolvingSymlinksInPath().deletingLastPathComponent().path
      #expect(service["ReadWritePaths"]?.first?.split(separator: " ").contains { $0 == folder || folder.hasSuffix($0) } == true,
              "\(service["ReadWritePaths"] ?? [])")
      // A store under /tmp would vanish behind a private /tmp.
      #expect(service["PrivateTmp"] == nil)
      let exec = try #require(service["ExecStart"]?.first).split(separator: " ").map(String.init)
      #expect(exec.first?.hasPrefix("/") == true)
      #expect(FileManager.default.isExecutableFile(atPath: exec[0]))
      #expect(Array(exec.dropFirst()).prefix(2) == ["daemon", "--config"])
      #expect(exec[3].hasPrefix("/") && exec[3].hasSuffix("/forage.json"))
      #expect(unit["Install"]?["WantedBy"] == [scope == "user" ? "default.target" : "multi-user.target"])
      #expect((service["User"] != nil) == (scope == "system"))
      if FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") {
        let verify = Process()
        verify.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        verify.arguments = ["verify", unitPath]
        let err = Pipe()
        verify.standardError = err
        verify.standardOutput = FileHandle.nullDevice
        try verify.run()
        let complaints = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        verify.waitUntilExit()
        // verify prints what it ignores (an unknown key or value) and still exits 0.
        #expect(verify.terminationStatus == 0 && !complaints.contains(unitPath), "systemd-analyze verify: \(complaints)")
      } else {
        print("systemd-analyze is not installed: the unit is checked by the INI parser only")
      }
    }
  }

  @Test func test_issue31_initServiceLaunchd_writesALaunchAgentPlist() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config("http://127.0.0.1:9"))
    let store = dir.file("data & more/s.sqlite")
    let r = try runForage(["init", "--service", "launchd", "--config", config, "--store", store])
    #expect(r.status == 0, "\(r.stderr)")
    let plist = try PropertyListSerialization.propertyList(from: Data(r.stdout.utf8), format: nil)
    let dict = try #require(plist as? [String: Any])
    #expect(dict["Label"] as? String == "org.forage.daemon")
    #expect(dict["KeepAlive"] as? Bool == true)
    #expect(dict["RunAtLoad"] as? Bool == true)
    let arguments = try #require(dict["ProgramArguments"] as? [String])
    #expect(arguments.first?.hasPrefix("/") == true)
    #expect(Array(arguments.dropFirst()) == ["daemon", "--config", config, "--store", store])
    #expect(dict["StandardOutPath"] as? String == dir.file("data & more/forage.out.log"))
    #expect(dict["StandardErrorPath"] as? String == dir.file("data & more/forage.err.log"))
  }

  @Test func test_issue31_initService_neverReplacesAnExistingFile_andNeedsAValidConfig() throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config("http://127.0.0.1:9"))
    let existing = try dir.write("forage.service", "mine\n")
    let r = try runForage(["init", "--service", "systemd", "--config", config, "--output", existing])
    #expect(r.status == 2)
    #expect(r.stderr.contains("cannot write \(existing): it exists; it is left as it is"))
    #expect(try String(contentsOfFile: existing, encoding: .utf8) == "mine\n")
    // A link that leads nowhere is not followed to create its target.
    let link = dir.file("dangling.service")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.file("nowhere"))
    #expect(try runForage(["init", "--service", "systemd", "--config", config, "--output", link]).status == 2)
    #expect(!FileManager.default.fileExists(atPath: dir.file("nowhere")))
    // No config, an invalid one, a password in a store URL: bad input.
    let missing = try runForage(["init", "--service", "systemd", "--config", dir.file("none.json")])
    #expect(missing.status == 2)
    #expect(missing.stderr.contains("no config at \(dir.file("none.json"))"))
    let bad = try dir.write("bad.json", #"{"tasks": [{"id": "t", "every": "soon"}], "sources": []}"#)
    let invalid = try runForage(["init", "--service", "systemd", "--config", bad])
    #expect(invalid.status == 2)
    #expect(invalid.stderr.contains("tasks[0]"), "\(invalid.stderr)")
    let secret = try runForage(
      ["init", "--service", "systemd", "--config", config, "--store", "postgres://forage:hunter2@db/forage"])
    #expect(secret.status == 2)
    #expect(!secret.stdout.contains("hunter2") && !secret.stderr.contains("hunter2"))
    #expect(try runForage(["init", "--service", "upstart"]).status == 2)
    #expect(try runForage(["init", "--system"]).status == 2)
  }

  // MARK: - The daemon under a service manager

  /// A datagram socket bound at `path` that collects what arrives.
  final class NotifySocket: @unchecked Sendable {
    let fd: Int32
    let path: String
    init(path: String) throws {
      self.path = path
      #if os(Linux)
      fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
      #else
      fd = socket(AF_UNIX, SOCK_DGRAM, 0)
      #endif
      var address = sockaddr_un()
      address.sun_family = sa_family_t(AF_UNIX)
      withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
      }
      var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
      }
      guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
    }
    /// The next message, or nil after 200 ms without one.
    func receive() -> String? {
      var buffer = [UInt8](repeating: 0, count: 4096)
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      return n > 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
    }
    deinit { close(fd) }
  }

  @Test func test_issue31_daemon_tellsSystemdReadyWatchdogStatusAndStopping_inOrder() async throws {
    let server = try TestServer(site: DemoSite(products: 5))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config(server.baseURL))
    let socket = try NotifySocket(path: dir.file("notify.sock"))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["daemon", "--config", config, "--store", dir.file("s.sqlite")]
    // A watchdog of 1 s: the loop says WATCHDOG=1 at least every 0.5 s.
    p.environment = ProcessInfo.processInfo.environment.merging(
      ["NOTIFY_SOCKET": socket.path, "WATCHDOG_USEC": "1000000"]) { _, new in new }
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    var messages: [String] = []
    let started = Date()
    // Until the status names the next launch (the launch ran and
    // resubmitted) and three watchdog pings came after it.
    while Date().timeIntervalSince(started) < 60 {
      if let m = socket.receive() { messages.append(m) }
      let afterStatus = messages.drop { !$0.hasPrefix("STATUS=next launch: t.refresh at ") }
      if afterStatus.filter({ $0 == "WATCHDOG=1" }).count >= 3 { break }
    }
    kill(p.processIdentifier, SIGTERM)
    while let m = socket.receive() { messages.append(m) }
    p.waitUntilExit()
    while let m = socket.receive() { messages.append(m) }
    #expect(p.terminationStatus == 0)
    #expect(messages.first == "READY=1", "\(messages)")
    #expect(messages.last == "STOPPING=1", "\(messages)")
    #expect(messages.contains { $0.hasPrefix("STATUS=next launch: t.refresh at ") }, "\(messages)")
    #expect(messages.filter { $0 == "WATCHDOG=1" }.count >= 3, "\(messages)")
    #expect(messages.filter { $0 == "READY=1" }.count == 1)
    #expect(messages.allSatisfy { $0 == "READY=1" || $0 == "WATCHDOG=1" || $0 == "STOPPING=1" || $0.hasPrefix("STATUS=") })
  }

  @Test func test_issue31_daemon_withoutWatchdogUSEC_sendsNoWatchdog_andWithoutNotifySocketNothing() async throws {
    let server = try TestServer(site: DemoSite(products: 2))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config(server.baseURL))
    let socket = try NotifySocket(path: dir.file("notify.sock"))
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["daemon", "--config", config, "--store", dir.file("s.sqlite")]
    p.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": socket.path]) { _, new in new }
      .filter { $0.key != "WATCHDOG_USEC" }
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    var messages: [String] = []
    let started = Date()
    while !messages.contains(where: { $0.hasPrefix("STATUS=next launch") }), Date().timeIntervalSince(started) < 60 {
      if let m = socket.receive() { messages.append(m) }
    }
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    while let m = socket.receive() { messages.append(m) }
    #expect(messages.first == "READY=1" && messages.last == "STOPPING=1", "\(messages)")
    #expect(!messages.contains("WATCHDOG=1"))
  }

  /// Standard error of a daemon, read while it runs.
  final class LogFile: Sendable {
    let path: String
    init(_ path: String) {
      self.path = path
      _ = FileManager.default.createFile(atPath: path, contents: nil)
    }
    var text: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
    var lines: [String] { text.split(separator: "\n").map(String.init) }
  }

  static func startDaemon(_ arguments: [String], log: LogFile) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: forageBinary())
    p.arguments = ["daemon"] + arguments
    p.standardOutput = FileHandle.nullDevice
    p.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log.path))
    try p.run()
    return p
  }

  static func waitFor(_ seconds: Double = 60, _ condition: () async throws -> Bool) async throws -> Bool {
    let started = Date()
    while Date().timeIntervalSince(started) < seconds {
      if try await condition() { return true }
      try await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
  }

  static func finishedRuns(_ store: String, task: String) async -> Int {
    guard let s = try? SQLiteStore(path: store), let runs = try? await s.runs(limit: 50) else { return 0 }
    return runs.filter { $0.summary != nil && $0.task == task }.count
  }

  @Test func test_issue31_SIGHUP_badConfigIsReportedAndKept_thenAGoodOneAddsAndRemovesTasks() async throws {
    let server = try TestServer(site: DemoSite(products: 3))
    defer { server.stop() }
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config(server.baseURL))
    let store = dir.file("s.sqlite")
    let log = LogFile(dir.file("daemon.log"))
    let p = try ServiceTests.startDaemon(["--config", config, "--store", store, "--log-format", "json"], log: log)
    defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
    #expect(try await ServiceTests.waitFor { await ServiceTests.finishedRuns(store, task: "t.refresh") == 1 })
    // A config that does not validate: reported with where, the old one kept.
    _ = try dir.write("forage.json", ServiceTests.config(server.baseURL, tasks: #"[{"id": "t.new", "kind": "appRefresh", "every": "often", "sources": ["catalog"]}]"#))
    kill(p.processIdentifier, SIGHUP)
    #expect(try await ServiceTests.waitFor { log.text.contains("config.reloadRefused") }, "\(log.text)")
    let refused = try #require(log.lines.first { $0.contains("config.reloadRefused") })
    let object = try #require(try JSONSerialization.jsonObject(with: Data(refused.utf8)) as? [String: Any])
    #expect(object["level"] as? String == "error")
    #expect((object["message"] as? String)?.contains("tasks[0].every") == true, "\(refused)")
    #expect(p.isRunning)
    // A valid one: t.new is added (due at once, so it runs), t.refresh removed.
    _ = try dir.write("forage.json", ServiceTests.config(server.baseURL, tasks: #"[{"id": "t.new", "kind": "processing", "every": "1h", "budget": "10s", "sources": ["catalog"]}]"#))
    kill(p.processIdentifier, SIGHUP)
    #expect(try await ServiceTests.waitFor { await ServiceTests.finishedRuns(store, task: "t.new") == 1 }, "\(log.text)")
    let reloaded = try #require(log.lines.first { $0.contains("config.reloaded") })
    #expect(reloaded.contains("tasks added: t.new; removed: t.refresh"), "\(reloaded)")
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
    // The removed task's pending request is gone; the added one's is kept.
    let pending = try await SQLiteStore(path: store).pendingTaskRequests()
    #expect(pending.map(\.identifier) == ["t.new"])
    // Every line of the log is one JSON object with time, level, event and message.
    for line in log.lines {
      let o = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
      #expect(o["time"] is String && o["level"] is String && o["event"] is String && o["message"] is String, "\(line)")
    }
    #expect(log.lines.contains { $0.contains(#""event":"launch.finished","task":"t.refresh""#) })
  }

  // MARK: - Metrics and health

  /// One sample of a metrics page.
  struct Sample: Hashable {
    var name: String
    var labels: [String: String]
    var value: Double
  }

  struct ExpositionError: Error, CustomStringConvertible {
    var line: Int, why: String
    var description: String { "line \(line): \(why)" }
  }

  /// Parses the Prometheus text format strictly: `# HELP` and `# TYPE` once
  /// per family, before its samples, families not interleaved, metric and
  /// label names of the allowed characters, label values with only `\\`,
  /// `\"` and `\n` escapes, no series twice, a final line feed.
  static func parseExposition(_ text: String) throws -> (types: [String: String], samples: [Sample]) {
    guard text.hasSuffix("\n") else { throw ExpositionError(line: 0, why: "no final line feed") }
    func isName(_ s: Substring, colons: Bool) -> Bool {
      guard let first = s.first, first.isASCII, first.isLetter || first == "_" || (colons && first == ":") else { return false }
      return s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || (colons && $0 == ":")) }
    }
    var types: [String: String] = [:], helps: Set<String> = [], finished: Set<String> = []
    var current: String?
    var samples: [Sample] = []
    var seen: Set<String> = []
    for (i, raw) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let n = i + 1
      if raw.hasPrefix("# HELP ") || raw.hasPrefix("# TYPE ") {
        let parts = raw.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, isName(parts[2], colons: true) else { throw ExpositionError(line: n, why: "bad comment") }
        let name = String(parts[2])
        if name != current {
          if let current { finished.insert(current) }
          guard !finished.contains(name) else { throw ExpositionError(line: n, why: "\(name) interleaved") }
          current = name
        }
        if parts[1] == "TYPE" {
          guard parts.count == 4, ["counter", "gauge", "histogram", "summary", "untyped"].contains(String(parts[3])),
                types[name] == nil, !samples.contains(where: { $0.name == name })
          else { throw ExpositionError(line: n, why: "bad or late TYPE") }
          types[name] = String(parts[3])
        } else {
          guard helps.insert(name).inserted else { throw ExpositionError(line: n, why: "second HELP") }
        }
        continue
      }
      guard !raw.isEmpty, !raw.hasPrefix("#") else { throw ExpositionError(line: n, why: "empty or stray comment line") }
      var rest = raw[...]
      let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
      let name = rest[..<nameEnd]
      guard isName(name, colons: true) else { throw ExpositionError(line: n, why: "bad metric name") }
      guard String(name) == current else { throw ExpositionError(line: n, why: "sample outside its family") }
      rest = rest[nameEnd...]
      var labels: [String: String] = [:]
      if rest.first == "{" {
        rest = rest.dropFirst()
        while rest.first != "}" {
          guard let eq = rest.firstIndex(of: "="), isName(rest[..<eq], colons: false) else {
            throw ExpositionError(line: n, why: "bad label name")
          }
          let label = String(rest[..<eq])
          rest = rest[rest.index(after: eq)...]
          guard rest.first == "\"" else { throw ExpositionError(line: n, why: "label value not quoted") }
          rest = rest.dropFirst()
          var value = ""
          while true {
            guard let c = rest.first else { throw ExpositionError(line: n, why: "unterminated label value") }
            rest = rest.dropFirst()
            if c == "\"" { break }
            if c == "\\" {
              switch rest.first {
              case "\\": value.append("\\")
              case "\"": value.append("\"")
              case "n": value.append("\n")
              default: throw ExpositionError(line: n, why: "bad escape")
              }
              rest = rest.dropFirst()
            } else {
              value.append(c)
            }
          }
          guard labels.updateValue(value, forKey: label) == nil else { throw ExpositionError(line: n, why: "label twice") }
          if rest.first == "," { rest = rest.dropFirst() } else if rest.first != "}" {
            throw ExpositionError(line: n, why: "expected , or }")
          }
        }
        rest = rest.dropFirst()
      }
      guard rest.first == " " else { throw ExpositionError(line: n, why: "no space before the value") }
      let fields = rest.dropFirst().split(separator: " ", omittingEmptySubsequences: false)
      guard (1...2).contains(fields.count), let value = Double(fields[0]) ?? ["+Inf": .infinity, "-Inf": -.infinity, "NaN": .nan][String(fields[0])],
            fields.count == 1 || Int64(fields[1]) != nil
      else { throw ExpositionError(line: n, why: "bad value") }
      let key = "\(name)\(labels.sorted { $0.key < $1.key })"
      guard seen.insert(key).inserted else { throw ExpositionError(line: n, why: "series twice") }
      if types[String(name)] == "counter" && value < 0 { throw ExpositionError(line: n, why: "negative counter") }
      samples.append(Sample(name: String(name), labels: labels, value: value))
    }
    return (types, samples)
  }

  @Test func test_issue31_strictExpositionParser_refusesWhatPrometheusRefuses() {
    #expect(throws: ExpositionError.self) { try ServiceTests.parseExposition("# TYPE a counter\na 1") }
    #expect(throws: ExpositionError.self) { try ServiceTests.parseExposition("# TYPE a counter\na{x=\"\\q\"} 1\n") }
    #expect(throws: ExpositionError.self) { try ServiceTests.parseExposition("# TYPE a counter\na{x=\"1\"} 1\na{x=\"1\"} 2\n") }
    #expect(throws: ExpositionError.self) { try ServiceTests.parseExposition("# TYPE a counter\nb 1\n") }
    #expect(throws: ExpositionError.self) { try ServiceTests.parseExposition("# TYPE a gauge\na{x=\"1\"}\n") }
    #expect(throws: ExpositionError.self) {
      try ServiceTests.parseExposition("# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\n")
    }
    #expect(throws: Never.self) { try ServiceTests.parseExposition("# HELP a x\n# TYPE a gauge\na{x=\"q\\\"\\n\"} 1.5\n") }
  }

  /// An HTTP GET on loopback: status and body.
  static func get(_ port: UInt16, _ path: String) throws -> (status: Int, body: String) {
    let r = try rawRequest(port, Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    let text = String(decoding: r, as: UTF8.self)
    let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
    let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
    return (status, body)
  }

  /// Sends `bytes` to 127.0.0.1:`port` and reads until the server closes.
  static func rawRequest(_ port: UInt16, _ bytes: [UInt8]) throws -> [UInt8] {
    let fd = connectTo(port)
    guard fd >= 0 else { throw POSIXError(.ECONNREFUSED) }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { break }
      out += buffer[0..<n]
    }
    return out
  }

  static func connectTo(_ port: UInt16) -> Int32 {
    #if os(Linux)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var a = sockaddr_in()
    a.sin_family = sa_family_t(AF_INET)
    a.sin_port = port.bigEndian
    a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let ok = withUnsafePointer(to: &a) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if ok != 0 {
      close(fd)
      return -1
    }
    return fd
  }

  /// The port a daemon's log says its metrics are served on.
  static func metricsPort(_ log: LogFile) -> UInt16? {
    guard let line = log.lines.first(where: { $0.contains("metrics on http://127.0.0.1:") }),
          let r = line.range(of: "127.0.0.1:") else { return nil }
    return UInt16(line[r.upperBound...].prefix { $0.isNumber })
  }

  @Test func test_issue31_metrics_parseAsPrometheusText_withTheExpectedSeries_andHealthzFlipsTo503() async throws {
    let server = try TestServer(site: DemoSite(products: 4))
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config(server.baseURL))
    let store = dir.file("s.sqlite")
    let log = LogFile(dir.file("daemon.log"))
    let p = try ServiceTests.startDaemon(["--config", config, "--store", store, "--metrics", "127.0.0.1:0"], log: log)
    defer { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
    #expect(try await ServiceTests.waitFor { await ServiceTests.finishedRuns(store, task: "t.refresh") == 1 })
    let port = try #require(ServiceTests.metricsPort(log), "\(log.text)")

    // A client that connects and sends nothing, and one that sends an
    // endless head, hold no one else up.
    let idle = ServiceTests.connectTo(port)
    defer { close(idle) }
    var huge = Array("GET /metrics HTTP/1.1\r\nX: ".utf8)
    huge += [UInt8](repeating: UInt8(ascii: "a"), count: 20_000)
    let tooLarge = String(decoding: try ServiceTests.rawRequest(port, huge), as: UTF8.self)
    #expect(tooLarge.hasPrefix("HTTP/1.1 431 "), "\(tooLarge.prefix(100))")
    #expect(String(decoding: try ServiceTests.rawRequest(port, Array("POST /metrics HTTP/1.1\r\n\r\n".utf8)), as: UTF8.self)
      .hasPrefix("HTTP/1.1 405 "))
    #expect(try ServiceTests.get(port, "/nothing").status == 404)

    let metrics = try ServiceTests.get(port, "/metrics")
    #expect(metrics.status == 200)
    let (types, samples) = try ServiceTests.parseExposition(metrics.body)
    func value(_ name: String, _ labels: [String: String]) -> Double? {
      samples.first { $0.name == name && $0.labels == labels }?.value
    }
    #expect(types["forage_launches_total"] == "counter")
    #expect(value("forage_launches_total", ["task": "t.refresh", "outcome": "completed"]) == 1)
    #expect(types["forage_pages_total"] == "counter")
    #expect(value("forage_pages_total", ["source": "catalog", "result": "fetched"]).map { $0 >= 5 } == true)
    #expect(value("forage_pages_total", ["source": "catalog", "result": "failed"]) != nil)
    #expect(value("forage_pages_total", ["source": "catalog", "result": "not_modified"]) != nil)
    #expect(value("forage_records_total", ["source": "catalog", "change": "new"]) == 4)
    #expect(value("forage_records_total", ["source": "catalog", "change": "removed"]) == 0)
    #expect(types["forage_source_data_age_seconds"] == "gauge")
    #expect(value("forage_source_data_age_seconds", ["source": "catalog"]).map { $0 >= 0 } == true)
    #expect(value("forage_notifications", ["state": "pending"]) == 0)
    #expect(value("forage_notifications", ["state": "dead"]) == 0)
    #expect(value("forage_downloads", ["state": "failed"]) == 0)
    #expect(value("forage_healthy", [:]) == 1)
    // No URL, header or store path in the page.
    #expect(!metrics.body.contains("127.0.0.1") && !metrics.body.contains(store))

    let healthy = try ServiceTests.get(port, "/healthz")
    #expect(healthy.status == 200)
    // The site goes away; three launches in which every page fails (run
    // beside the daemon, on its store) make the source need attention.
    server.stop()
    for _ in 0..<3 {
      let r = try runForage(["run", "--config", config, "--store", store, "--task", "t.refresh", "--budget", "10s"])
      #expect(r.status != 2, "\(r.stderr)")
    }
    let failing = try ServiceTests.get(port, "/healthz")
    #expect(failing.status == 503)
    #expect(failing.body.contains("catalog: every page failed in its last 3 launches"), "\(failing.body)")
    let after = try ServiceTests.parseExposition(try ServiceTests.get(port, "/metrics").body).samples
    #expect(after.first { $0.name == "forage_healthy" }?.value == 0)
    kill(p.processIdentifier, SIGTERM)
    p.waitUntilExit()
    #expect(p.terminationStatus == 0)
  }

  @Test func test_issue31_metricsAddress_isLoopbackUnlessNamed_andABusyPortIsBadInput() async throws {
    let dir = TemporaryDirectory()
    let config = try dir.write("forage.json", ServiceTests.config("http://127.0.0.1:9"))
    let name = try runForage(["daemon", "--config", config, "--metrics", "example.com:9464"])
    #expect(name.status == 2)
    #expect(name.stderr.contains("--metrics needs a numeric address"))
    let junk = try runForage(["daemon", "--config", config, "--metrics", "127.0.0.1:http"])
    #expect(junk.status == 2)
    let format = try runForage(["daemon", "--config", config, "--log-format", "xml"])
    #expect(format.status == 2)
    #expect(format.stderr.contains("--log-format expects text or json"))
    // A port taken by another program.
    let other = try TestServer(site: DemoSite(products: 1))
    defer { other.stop() }
    let busy = try runForage(["daemon", "--config", config, "--store", dir.file("s.sqlite"), "--metrics", "127.0.0.1:\(other.port)"])
    #expect(busy.status == 2)
    #expect(busy.stderr.contains("cannot serve metrics on 127.0.0.1:\(other.port): another program listens on that port"), "\(busy.stderr)")
  }
}
