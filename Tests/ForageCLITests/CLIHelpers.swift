import Foundation
import ForageStore
import ForageTestSupport
import Testing
#if Postgres
import ForagePostgres
#endif

/// The built `forage` executable, beside the test bundle.
func forageBinary() -> String {
  let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
  var dir = runner.deletingLastPathComponent()
  // macOS: …/ForagePackageTests.xctest/Contents/MacOS/ForagePackageTests
  while dir.path.contains(".xctest") { dir = dir.deletingLastPathComponent() }
  let candidate = dir.appendingPathComponent("forage").path
  if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
  // Fall back to the package's debug build folder.
  let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  return root.appendingPathComponent(".build/debug/forage").path
}

/// The test program `ForageSinkProbe`, built beside `forage`.
func sinkProbeBinary() -> String {
  URL(fileURLWithPath: forageBinary()).deletingLastPathComponent().appendingPathComponent("ForageSinkProbe").path
}

/// The result of running the `forage` executable (or another program).
struct CommandResult {
  /// The exit status, or the number of the signal that ended it.
  var status: Int32
  var stdout: String
  var stderr: String
  /// A signal ended it (`status` is the signal's number).
  var signalled = false
}

/// Runs `forage` with `arguments` to completion, with `environment` added to
/// (or replacing entries of) this process's environment: how a test hands the
/// child a secret without setting it in the test process. `launcher` is a
/// program and its arguments that run `forage` (`runuser -u nobody --`);
/// `program` runs instead of `forage` (`sinkProbeBinary()`).
func runForage(
  _ arguments: [String], in directory: String? = nil, environment: [String: String] = [:], launcher: [String] = [],
  program: String = forageBinary()
) throws -> CommandResult {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: launcher.first ?? program)
  p.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [program] + arguments
  if !environment.isEmpty {
    p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
  }
  if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let out = Pipe(), err = Pipe()
  p.standardOutput = out
  p.standardError = err
  try p.run()
  // Standard error is read on another thread while standard output is read
  // here: a child that fills either pipe cannot block.
  let errors = PipeData()
  let done = DispatchSemaphore(value: 0)
  DispatchQueue.global().async {
    errors.data = err.fileHandleForReading.readDataToEndOfFile()
    done.signal()
  }
  let o = out.fileHandleForReading.readDataToEndOfFile()
  done.wait()
  p.waitUntilExit()
  let e = errors.data
  return CommandResult(
    status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self),
    signalled: p.terminationReason == .uncaughtSignal)
}

/// What one pipe gave, filled on another thread (read after its semaphore).
private final class PipeData: @unchecked Sendable {
  var data = Data()
}

/// A temporary folder removed when the value is released.
final class TemporaryDirectory: Sendable {
  let path: String
  init() {
    path = NSTemporaryDirectory() + "forage-cli-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  func file(_ name: String) -> String { path + "/" + name }
  func write(_ name: String, _ text: String) throws -> String {
    try text.write(toFile: file(name), atomically: true, encoding: .utf8)
    return file(name)
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Starts `forage` with `arguments` and returns the running process (its
/// output discarded), so a test can signal it (`kill(p.processIdentifier,
/// SIGKILL)`) and then `waitUntilExit()`.
func startForage(_ arguments: [String], environment: [String: String] = [:]) throws -> Process {
  let p = Process()
  p.executableURL = URL(fileURLWithPath: forageBinary())
  p.arguments = arguments
  p.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
  p.standardOutput = FileHandle.nullDevice
  p.standardError = FileHandle.nullDevice
  try p.run()
  return p
}

/// The stores a test runs a child process against: SQLite always;
/// PostgreSQL when the test server is there (`FORAGE_TEST_POSTGRES_URL`,
/// which `scripts/test` sets), or under CI, where a missing server fails.
enum ChildStoreKind: String, CaseIterable, CustomStringConvertible, Sendable {
  case sqlite, postgres
  static var all: [ChildStoreKind] {
    #if Postgres
    return FleetServer.url != nil || FleetServer.isCI ? [.sqlite, .postgres] : [.sqlite]
    #else
    return [.sqlite]
    #endif
  }
  var description: String { rawValue }
}

/// Runs `body` with a new store of `kind`, opened in this process, and the
/// location a child is given for it: a file in `dir`, or a new database on
/// the test server (dropped afterwards). The store is closed afterwards,
/// also when `body` throws.
func withChildStore(
  _ kind: ChildStoreKind, in dir: TemporaryDirectory, _ body: (any Store, String) async throws -> Void
) async throws {
  func run(_ store: any Store, _ location: String) async throws {
    do {
      try await body(store, location)
    } catch {
      try? await store.close()
      throw error
    }
    try await store.close()
  }
  switch kind {
  case .sqlite:
    let path = dir.file("forage.sqlite")
    try await run(try SQLiteStore(path: path), path)
  case .postgres:
    #if Postgres
    try await FleetTests.withDatabase { url in try await run(try PostgresStore(url: url), url) }
    #else
    Issue.record("built without the Postgres trait: no PostgreSQL store to test")
    #endif
  }
}

/// (key, url, fields) of every record of `store`, one tab-separated line
/// each, sorted: what must match between two runs of one crawl.
func storeContents(_ store: any Store) async throws -> [String] {
  var rows: [String] = []
  var after: Int64 = 0
  while true {
    let batch = try await store.records(source: nil, afterID: after, limit: 1000)
    rows += batch.map { "\($0.key)\t\($0.url)\t\($0.fieldsJSON)" }
    guard let last = batch.last else { break }
    after = last.id
  }
  return rows.sorted()
}

/// Lets the clients of a run fetch at most `allowance` product pages (of
/// every server made with it); the next ones wait until the next `begin`,
/// and are then answered (to a client that may be gone). A run that may not
/// fetch every page cannot finish its crawl, however fast the machine: it is
/// still crawling when the test kills it or restarts its database.
final class ProductPageGate: Sendable {
  private let state = Guarded((round: 0, served: 0, allowance: Int.max))

  /// A new round, in which `allowance` more product pages may be fetched.
  func begin(allowance: Int) {
    state.withLock { $0 = (round: $0.round + 1, served: 0, allowance: allowance) }
  }

  /// Returns when the request may be answered (at most two minutes on).
  func pass() {
    let round = state.withLock { s -> Int? in
      guard s.served < s.allowance else { return s.round }
      s.served += 1
      return nil
    }
    guard let round else { return }
    for _ in 0..<12_000 where state.withLock({ $0.round }) == round { usleep(10_000) }
  }

  /// A server for `site` whose product pages pass this gate first.
  func server(_ site: DemoSite) throws -> TestServer {
    let origin = Guarded("")
    let server = try TestServer(
      routes: [
        "/product/*": Route { [self] request in
          pass()
          return site.response(for: request.target, origin: origin.withLock { $0 }) ?? TestResponse(status: 404, body: [])
        }
      ], site: site)
    origin.withLock { $0 = server.baseURL }
    return server
  }
}
