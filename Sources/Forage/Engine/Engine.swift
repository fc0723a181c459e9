import Foundation
import ForageHTTP
import ForageScheduler
import ForageStore

/// Forage in one value: a config, the store it keeps, and the transport it
/// fetches through, with what a front end does with them (a command line,
/// an app's background task, a test) in one call each.
///
///     let engine = try Engine.open(configPath: "forage.json")
///     let summary = try await engine.run(task: "com.example.refresh")
///     print(summary)
///     try await engine.close()
///
/// The engine never prints: it returns values, calls the `progress` closures
/// it is given, and throws errors whose description is a sentence for a
/// person (`ConfigError`, `EngineError`, `StoreError`).
public struct Engine: Sendable {
  /// The config the engine runs.
  public let config: ForageConfig
  /// The store it fills.
  public let store: any Store
  /// How it fetches: ``defaultTransport()`` unless a caller chose one.
  public let transport: any Transport
  /// How messages name the config (its file's path).
  public let configName: String

  /// Creates an engine over an open store.
  ///
  /// - Parameters:
  ///   - transport: nil for the platform's default (``defaultTransport()``).
  ///   - configName: how messages name the config, e.g. its file's path.
  public init(
    config: ForageConfig, store: any Store, transport: (any Transport)? = nil, configName: String = "the config"
  ) {
    self.config = config
    self.store = store
    self.transport = transport ?? Engine.defaultTransport()
    self.configName = configName
  }

  /// Loads the config at `configPath` and opens its store.
  ///
  /// - Parameter store: a store location that replaces the config's (a
  ///   SQLite path); nil for ``storeLocation(for:configPath:)``.
  /// - Throws: `ConfigError` for a config that cannot be read or is invalid
  ///   (nothing is written then); `EngineError` or `StoreError` when the store
  ///   cannot be opened.
  public static func open(configPath: String, store: String? = nil, transport: (any Transport)? = nil) throws
    -> Engine
  {
    let config = try ForageConfig.load(path: configPath)
    let location = store ?? storeLocation(for: config, configPath: configPath)
    return Engine(config: config, store: try openStore(location), transport: transport, configName: configPath)
  }

  /// The platform's transport: libcurl on Linux (an order of magnitude faster
  /// than FoundationNetworking there), URLSession on Apple platforms.
  public static func defaultTransport() -> any Transport {
    #if os(Linux)
    return CurlTransport()
    #else
    return URLSessionTransport()
    #endif
  }

  /// Where a config's store is: its `store` (relative to the config file's
  /// folder), else `forage.sqlite` beside the config.
  public static func storeLocation(for config: ForageConfig, configPath: String) -> String {
    let name = config.store ?? EngineDefaults.storePath
    if name.hasPrefix("/") || name.contains("://") { return name }
    let folder = (configPath as NSString).deletingLastPathComponent
    return folder.isEmpty ? name : (folder as NSString).appendingPathComponent(name)
  }

  /// Opens the store at `location`: a SQLite path (created if needed; its
  /// folder must exist), or a URL whose scheme a front end registered with
  /// ``registerStore(scheme:_:)`` (the `forage` tool registers `postgres://`).
  ///
  /// - Parameter forReading: open an existing store to read it only: nothing
  ///   is created or migrated. On SQLite
  ///   (``SQLiteStore/init(readingAt:busyTimeout:)``) a read-only file or
  ///   folder is opened read-only; a registered opener is given the flag
  ///   (the `forage` tool's opens `PostgresStore(readingAt:)`). What a
  ///   command that only reads (status, export) passes.
  /// - Throws: `EngineError.unsupportedStore` for a `postgres://` URL when no
  ///   PostgreSQL store is linked; `StoreError` when the store cannot be
  ///   opened or belongs to another program (with `forReading`, also when
  ///   there is no Forage store at the location, or an older Forage wrote it).
  public static func openStore(_ location: String, forReading: Bool = false) throws -> any Store {
    if let open = opener(for: location) { return try open(location, forReading) }
    if location.hasPrefix("postgres://") || location.hasPrefix("postgresql://") {
      throw EngineError(
        .unsupportedStore,
        "this program cannot open PostgreSQL stores (ForagePostgres is not linked in); use a SQLite path")
    }
    return forReading ? try SQLiteStore(readingAt: location) : try SQLiteStore(path: location)
  }

  // MARK: Running

  /// Runs one launch now: a task's sources within its budget, or the named
  /// sources (all when nil).
  ///
  ///     let summary = try await engine.run(sources: ["prices"], budget: .seconds(30))
  ///
  /// - Parameters:
  ///   - task: a task of the config; its sources and budget are used.
  ///   - budget: replaces the task's budget (default: the task's, else
  ///     ``EngineDefaults/runBudget``).
  ///   - stop: stops the launch early the way its budget would.
  ///   - progress: called after each commit with the running totals.
  ///   - log: told what went wrong after a task's crawl (a download that
  ///     failed), which the summary does not hold.
  /// - Throws: `EngineError.unknownTask` or `EngineError.unknownSource`
  ///   (see ``ForageConfig/launch(task:sources:budget:configName:)``); store
  ///   errors. Fetch failures are counted, not thrown.
  public func run(
    task: String? = nil, sources: [String]? = nil, budget: Duration? = nil, stop: StopRequest? = nil,
    progress: (@Sendable (RunSummary) -> Void)? = nil, log: (@Sendable (String) -> Void)? = nil
  ) async throws -> RunSummary {
    let launch = try config.launch(task: task, sources: sources, budget: budget, configName: configName)
    return try await run(launch, stop: stop, progress: progress, log: log)
  }

  /// Runs a launch resolved with ``ForageConfig/launch(task:sources:budget:configName:)``
  /// (a front end that checked the names before opening the store passes
  /// what it resolved; nothing is looked up again).
  ///
  ///     let launch = try engine.config.launch(task: "com.example.refresh", sources: nil, budget: nil)
  ///     let summary = try await engine.run(launch)
  ///
  /// - Parameters:
  ///   - stop: stops the launch early the way its budget would.
  ///   - progress: called after each commit with the running totals.
  ///   - log: told what went wrong after a task's crawl (a download that
  ///     failed), which the summary does not hold.
  /// - Throws: `ConfigError` for a source that does not compile; store
  ///   errors. Fetch failures are counted, not thrown.
  public func run(
    _ launch: Launch, stop: StopRequest? = nil, progress: (@Sendable (RunSummary) -> Void)? = nil,
    log: (@Sendable (String) -> Void)? = nil
  ) async throws -> RunSummary {
    let deadline = ContinuousClock.now + launch.budget
    let job = Job(config: config, store: store, transport: transport)
    let summary = try await job.run(launch, stop: stop, progress: progress)
    // A task's launch goes on as a scheduler's does (one code path): its
    // maintenance, then its queued downloads with what is left.
    if let definition = launch.definition {
      await TaskRunner.afterCrawl(
        definition, summary: summary, config: config, store: store, fetcher: job.fetcher,
        remaining: { stop?.isRequested == true ? .zero : deadline - ContinuousClock.now }, progress: nil,
        log: SchedulerLog(log ?? { _ in }), now: Date())
    }
    return summary
  }

  // MARK: Export

  /// Writes the stored records (all, or one source's) as JSON Lines or CSV,
  /// a chunk of text at a time; returns how many records were written.
  ///
  /// - Throws: `EngineError.unknownSource` when the store holds no such
  ///   source (nothing is written); store errors.
  ///
  /// - Parameter csvFormulas: true writes CSV cells a spreadsheet would run
  ///   as formulas as they are (see `Exporter.guardingFormula(_:)`).
  @discardableResult
  public func export(
    format: Exporter.Format, source: String? = nil, csvFormulas: Bool = false, write: (String) throws -> Void
  ) async throws -> Int {
    if let source {
      let known = try await store.sourceNames()
      guard known.contains(source) else {
        let hint = Spelling.hint(for: source, in: known)
        let list = known.isEmpty ? "it holds no sources yet" : "it holds \(known.joined(separator: ", "))"
        throw EngineError(.unknownSource, "the store has no source \"\(source)\"\(hint); \(list)")
      }
    }
    return try await Exporter(store: store).export(format: format, source: source, csvFormulas: csvFormulas, write: write)
  }

  /// Closes the store: everything is written to its file (see
  /// `Store.close()`). The engine cannot be used afterwards.
  public func close() async throws {
    try await store.close()
  }
}

/// What one launch runs, resolved from a task or source names once (by
/// ``ForageConfig/launch(task:sources:budget:configName:)``) and passed down
/// to the engine and the job, which look nothing up again.
public struct Launch: Sendable, Hashable {
  /// The task identifier recorded with the run (`run` without a task).
  public var task: String
  /// The config's task, when the launch is one (its downloads and
  /// maintenance follow the crawl); nil for named sources.
  public var definition: TaskDefinition?
  /// The sources, in the order asked (every source when none were named).
  public var sources: [Source]
  /// The time the launch may take.
  public var budget: Duration

  /// A launch of `sources` within `budget`, recorded as `task`.
  public init(task: String = "run", definition: TaskDefinition? = nil, sources: [Source], budget: Duration) {
    self.task = task
    self.definition = definition
    self.sources = sources
    self.budget = budget
  }
}

extension ForageConfig {
  /// Resolves what a launch runs: a task's sources and budget, or the named
  /// sources (all when nil), checking every name first, so that a front end
  /// can refuse bad input before it opens or writes anything.
  ///
  ///     let launch = try config.launch(task: nil, sources: ["prices"], budget: .seconds(30))
  ///
  /// - Parameter configName: how messages name the config.
  /// - Throws: `EngineError` of kind `.unknownTask` or `.unknownSource`,
  ///   with the closest name.
  public func launch(task: String?, sources: [String]?, budget: Duration?, configName: String = "the config")
    throws(EngineError) -> Launch
  {
    var names = sources
    var definition: TaskDefinition?
    if let task {
      guard let found = self.task(withID: task) else {
        let known = tasks.map(\.id)
        let suggestion = Spelling.hint(for: task, in: known)
        let hint = !suggestion.isEmpty ? suggestion
          : known.isEmpty ? "; it has no tasks" : " (tasks: \(known.joined(separator: ", ")))"
        throw EngineError(.unknownTask, "no task \"\(task)\" in \(configName)\(hint)")
      }
      names = found.sources
      definition = found
    }
    return Launch(
      task: task ?? "run", definition: definition, sources: try self.sources(named: names, configName: configName),
      budget: budget ?? definition?.budget ?? EngineDefaults.runBudget)
  }

  /// The sources named (every source when nil), in that order.
  ///
  /// - Throws: `EngineError.unknownSource` naming the first unknown name and
  ///   the closest known one.
  public func sources(named names: [String]?, configName: String = "the config") throws(EngineError) -> [Source] {
    guard let names else { return sources }
    var found: [Source] = []
    for name in names {
      guard let source = source(named: name) else {
        let hint = Spelling.hint(for: name, in: sources.map(\.name))
        throw EngineError(.unknownSource, "no source \"\(name)\" in \(configName)\(hint)")
      }
      found.append(source)
    }
    return found
  }
}
