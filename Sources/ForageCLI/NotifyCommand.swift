import Foundation
import Forage
import ForageStore
import ForageSupport

/// `forage notify`: delivers the notifications that are due, or a test one.
struct NotifyCommand: Command {
  static let name = "notify"
  static let abstract = "Deliver the notifications that are due now, or a test one."
  static let arguments: [Argument] = [
    .option("--config", "FILE", "The config file (its \"notify\" channels).", default: EngineDefaults.configFile),
    .option(
      "--store", "PATH", "A SQLite file or a postgres:// URL.",
      default: "the config's \"store\", else \(EngineDefaults.storePath) beside the config"),
    .option(
      "--wait", "DURATION",
      "Keep trying for up to DURATION: retries whose backoff has not passed are waited for."),
    .option("--test", "CHANNEL", "Send one sample notification through CHANNEL; the outbox is not touched."),
    .flag(
      "--json",
      "Print what was done as JSON: {\"delivered\",\"failed\",\"dead\",\"pending\",\"problems\"}, or with --test "
        + "{\"test\",\"delivered\",\"problem\"}."),
  ]
  static let exclusive = [["--wait", "--test"]]
  static let discussion = """
    Every notable change queues one notification per channel, in the same
    transaction as the change. `forage run` and `forage daemon` deliver them
    as they go; this command delivers what is still due: retries whose
    backoff has passed, and what a launch had no time left for. Each
    notification keeps its id on every retry (the webhook-id header), so a
    receiver can drop duplicates. One older than its channel's maxAge is
    marked dead and listed, never dropped silently.
    """
  static let notes = """
    Exit status: 0 everything due was delivered (or the test one was), 1 some
    delivery failed (it is retried later) or is dead, 2 bad input.
    """

  var config = EngineDefaults.configFile
  var store: String?
  var wait: Duration?
  var test: String?
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    config = try args.option("--config") ?? config
    store = try args.option("--store")
    if let text = try args.option("--wait") {
      guard let d = Units.duration(text), d > .zero else {
        throw UsageError("--wait expects a duration such as 30s, 5m or 1h, not \"\(text)\"")
      }
      wait = d
    }
    test = try args.option("--test")
    json = args.flag("--json")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let loaded = loadConfig(config, out) else { return .badInput }
    guard !loaded.notify.isEmpty else {
      out.error("forage notify: \(config) has no channels; add a \"notify\" array (see docs/configuration.md)")
      return .badInput
    }
    if let test {
      guard let channel = loaded.notify.first(where: { $0.name == test }) else {
        let names = loaded.notify.map(\.name)
        let hint = Spelling.hint(for: test, in: names)
        out.error("forage notify: no channel \"\(test)\" in \(config)\(hint); channels: \(names.joined(separator: ", "))")
        return .badInput
      }
      // A test needs no store.
      let problem = await Notifier.sendTest(channel, transport: Engine.defaultTransport(), directory: loaded.directory)
      if json {
        var fields: [(String, JSONValue)] = [("test", .string(test)), ("delivered", .bool(problem == nil))]
        if let problem { fields.append(("problem", .string(problem))) }
        out.print(JSONValue.object(fields).serialized())
      }
      if let problem {
        out.error("forage notify: the test notification through \(test) failed: \(problem)")
        return .jobFailed
      }
      if !json { out.note("sent a test notification through \(test)") }
      return .ok
    }
    let engine: Engine
    do {
      let location = store ?? Engine.storeLocation(for: loaded, configPath: config)
      guard FileManager.default.fileExists(atPath: location) || location.contains("://") else {
        out.error("forage notify: no store at \(StoreLocation.redacted(location))")
        return .badInput
      }
      engine = Engine(config: loaded, store: try Engine.openStore(location), configName: config)
    } catch {
      out.error("forage notify", error)
      return .badInput
    }
    let work = Task { () throws -> (Notifier.Report, NotificationCounts) in
      var report = try await engine.deliverNotifications()
      let deadline = wait.map { Date().addingTimeInterval($0.seconds) }
      var counts = try await engine.store.notificationCounts(now: Date())
      while let deadline, counts.pending > 0, let next = counts.nextAttemptAt, next < deadline, !Task.isCancelled {
        let pause = max(0, next.timeIntervalSinceNow)
        try await Task.sleep(for: .milliseconds(Int64(pause * 1000) + 50))
        report.add(try await engine.deliverNotifications())
        counts = try await engine.store.notificationCounts(now: Date())
      }
      return (report, counts)
    }
    let (signals, received) = SignalWatcher.stopping("forage notify", "stopping", out) { work.cancel() }
    let result = await work.result
    signals.cancel()
    try? await engine.close()
    switch result {
    case .success(let (report, counts)):
      if json {
        out.print(
          JSONValue.object([
            ("delivered", .number(Double(report.delivered))), ("failed", .number(Double(report.failed))),
            ("dead", .number(Double(report.dead))), ("pending", .number(Double(counts.pending))),
            ("problems", .array(report.problems.map { JSONValue.string($0) })),
          ]).serialized())
      } else {
        for problem in report.problems { out.error("forage notify: \(problem)") }
        var line = "delivered \(report.delivered), failed \(report.failed), dead \(report.dead); \(counts.pending) pending"
        if counts.pending > 0, let next = counts.nextAttemptAt {
          line += " (next attempt in \(Units.format(.seconds(max(0, Int(next.timeIntervalSinceNow.rounded()))))))"
        }
        out.note(line)
      }
      if let signal = received.signal { return .signal(signal) }
      return report.failed + report.dead > 0 ? .jobFailed : .ok
    case .failure(let error):
      if let signal = received.signal { return .signal(signal) }
      out.error("forage notify", error)
      return .jobFailed
    }
  }
}
