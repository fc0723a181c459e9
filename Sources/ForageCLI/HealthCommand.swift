import Foundation
import Forage
import ForageStore
import ForageSupport

/// `forage health`: the episodes during which a source's changes are held,
/// and the user's acceptance of what one holds.
struct HealthCommand: Command {
  static let name = "health"
  static let abstract = "List sources whose changes are held, or accept what one holds."
  static let arguments: [Argument] = [
    .optionalPositional("ACTION", "accept: apply what SOURCE's open episode holds, and end it."),
    .optionalPositional("SOURCE", "The source whose held changes are accepted."),
    .option("--config", "FILE", "The config file (its store and \"notify\" channels).", default: EngineDefaults.configFile),
    .option(
      "--store", "PATH", "A SQLite file or a postgres:// URL.",
      default: "the config's \"store\", else \(EngineDefaults.storePath) beside the config"),
    .option("--limit", "N", "Episodes listed, open ones first.", default: "20"),
    .flag("--json", "Print the episodes (or the acceptance) as JSON."),
  ]
  static let discussion = """
    A crawl that would remove most of a source's records while its pages
    answered 2xx with markup, pages on which none of the source's selectors
    match any more, or a field that most records had and few have now, hold
    the changes instead of applying them: the records stay as they were, and
    an episode starts (one source.unhealthy notification). It ends when a
    crawl of the source is healthy again, after the site or the config was
    fixed (what that crawl finds is applied; one source.recovered), or when
    you accept the changes: `forage health accept SOURCE` applies the held
    removals and field changes as they were found, with their notifications.
    docs/configuration.md ("health") says exactly when a change is held.
    """
  static let notes = """
    Exit status: 0 no source is held (or the changes were accepted), 1 a
    source is held, 2 bad input (no such source, or nothing held for it).
    """

  var accept: String?
  var config = EngineDefaults.configFile
  var store: String?
  var limit = 20
  var json = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    let action = args.optionalPositional("ACTION")
    let source = args.optionalPositional("SOURCE")
    switch action {
    case nil: break
    case "accept"?:
      guard let source else { throw UsageError("accept needs a SOURCE: forage health accept SOURCE") }
      accept = source
    case let other?:
      throw UsageError("unknown action \"\(other)\"; the only action is accept (forage health accept SOURCE)")
    }
    config = try args.option("--config") ?? config
    store = try args.option("--store")
    if let text = try args.option("--limit") {
      guard let n = Int(text), n > 0 else { throw UsageError("--limit expects a whole number above 0, not \"\(text)\"") }
      limit = n
    }
    json = args.flag("--json")
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    let loaded: ForageConfig?
    if FileManager.default.fileExists(atPath: config) || accept != nil {
      guard let c = loadConfig(config, out) else { return .badInput }
      loaded = c
    } else {
      loaded = nil
    }
    guard let location = store ?? loaded.map({ Engine.storeLocation(for: $0, configPath: config) }) else {
      out.error("forage health: no config at \(config); give --store PATH or --config FILE")
      return .badInput
    }
    let opened: any Store
    if accept == nil {
      guard let s = openExistingStore(location, for: "forage health", out) else { return .badInput }
      opened = s
    } else {
      guard FileManager.default.fileExists(atPath: location) || location.contains("://") else {
        out.error("forage health: no store at \(StoreLocation.redacted(location))")
        return .badInput
      }
      do { opened = try Engine.openStore(location) } catch {
        out.error("forage health", error)
        return .badInput
      }
    }
    defer { Task { try? await opened.close() } }
    do {
      if let source = accept { return try await acceptChanges(of: source, store: opened, config: loaded!, out) }
      let episodes = try await opened.healthEpisodes(limit: limit)
      try? await opened.close()
      if json {
        out.print(JSONValue.array(episodes.map(Self.json)).serialized())
      } else if episodes.isEmpty {
        out.print("No source has had its changes held.")
      } else {
        for e in episodes { out.print(Self.text(e)) }
      }
      return episodes.contains(where: \.isOpen) ? .jobFailed : .ok
    } catch {
      out.error("forage health", error)
      return .jobFailed
    }
  }

  private func acceptChanges(of source: String, store: any Store, config: ForageConfig, _ out: Terminal) async throws
    -> ExitStatus
  {
    let known = config.sources.map(\.name)
    let episodes = try await store.healthEpisodes(limit: 1_000)
    guard known.contains(source) || episodes.contains(where: { $0.source == source }) else {
      out.error("forage health: no source \"\(source)\" in \(config)\(Spelling.hint(for: source, in: known))")
      return .badInput
    }
    guard let accepted = try await store.acceptHeldChanges(
      source: source, router: NotificationRouter(config: config), now: Date())
    else {
      try? await store.close()
      out.error("forage health: nothing is held for \(source) (forage health lists the episodes)")
      return .badInput
    }
    if config.notify.isEmpty == false {
      // Delivered now, as a launch would; what fails is retried by `forage notify`.
      _ = try? await Notifier(config: config, store: store, transport: Engine.defaultTransport()).deliverDue()
    }
    try? await store.close()
    let removed = accepted.changes.filter { $0.kind == .removed }.count
    let changed = accepted.changes.count - removed
    if json {
      out.print(
        JSONValue.object([
          ("source", .string(source)), ("episode", Self.json(accepted.episode)),
          ("removed", .number(Double(removed))), ("changed", .number(Double(changed))),
          ("notifications", .number(Double(accepted.notifications))),
        ]).serialized())
    } else {
      out.note("\(source): accepted \(removed) removal\(removed == 1 ? "" : "s") and \(changed) change\(changed == 1 ? "" : "s"); the episode is over")
    }
    return .ok
  }

  /// A date as the list shows it: ISO 8601, UTC, to the second.
  static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

  static func text(_ e: HealthEpisode) -> String {
    var line = "\(e.source): "
    if e.isOpen {
      line += "HELD " + StoreStatus.heldSentence(e)
      line += "; \(e.held) change\(e.held == 1 ? "" : "s") held"
    } else {
      let how = e.resolution == .accepted ? "accepted" : "recovered"
      line += "\(how) \(e.endedAt.map { iso($0) } ?? "")"
      line += " (held from \(Self.iso(e.startedAt)): \(e.evidence))"
    }
    for url in e.examples.prefix(3) where e.isOpen { line += "\n    \(url)" }
    return line
  }

  static func json(_ e: HealthEpisode) -> JSONValue {
    .object([
      ("source", .string(e.source)), ("open", .bool(e.isOpen)), ("problem", .string(e.kind.rawValue)),
      ("selector", .string(e.subject)), ("before", .number(Double(e.before))),
      ("beforeOf", .number(Double(e.beforeTotal))), ("now", .number(Double(e.now))),
      ("nowOf", .number(Double(e.nowTotal))), ("examples", .array(e.examples.map(JSONValue.string))),
      ("startedAt", .string(Self.iso(e.startedAt))),
      ("endedAt", e.endedAt.map { .string(Self.iso($0)) } ?? .null),
      ("resolution", e.resolution.map { .string($0.rawValue) } ?? .null), ("held", .number(Double(e.held))),
      ("message", .string(e.evidence)),
    ])
  }
}
