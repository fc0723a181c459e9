import Dispatch
import Foundation
import ForageStore
import ForageSupport
#if Postgres
import ForagePostgres
#endif

/// `forage-bench stream [--commits N] [--store PATH|postgres://URL]`: the
/// latency from a commit to its change reaching a change stream of the same
/// process (issue 30). Each of N commits writes one page with one new
/// record; the stream's task notes when the change arrives; the next commit
/// waits for it. Prints the median and p99 of commit-start-to-yield and of
/// the commit call alone (what the stream adds is the difference).
enum StreamBenchmark {
  static func run(_ args: [String]) throws -> Int32 {
    var commits = 1_000
    var location: String?
    var i = 0
    while i < args.count {
      switch args[i] {
      case "--commits": i += 1; commits = i < args.count ? Int(args[i]) ?? commits : commits
      case "--store": i += 1; location = i < args.count ? args[i] : nil
      default:
        print("usage: forage-bench stream [--commits N] [--store PATH|postgres://URL]")
        return 2
      }
      i += 1
    }
    let folder = NSTemporaryDirectory() + "forage-bench-stream-" + UUID().uuidString
    let path = location ?? folder + "/bench.sqlite"
    if location == nil { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
    defer { if location == nil { try? FileManager.default.removeItem(atPath: folder) } }

    let store: any Store
    if path.hasPrefix("postgres://") || path.hasPrefix("postgresql://") {
      #if Postgres
      store = try PostgresStore(url: path)
      #else
      print("forage-bench stream: built without PostgreSQL stores")
      return 2
      #endif
    } else {
      store = try SQLiteStore(path: path)
    }
    let result = Locked<Result<(total: [Double], commit: [Double]), any Error>?>(nil)
    let semaphore = DispatchSemaphore(value: 0)
    let count = commits
    Task {
      do {
        let figures = try await measure(store, commits: count)
        result.withLock { $0 = .success(figures) }
      } catch {
        result.withLock { $0 = .failure(error) }
      }
      try? await store.close()
      semaphore.signal()
    }
    semaphore.wait()
    let (total, commit) = try result.withLock { $0! }.get()
    guard !total.isEmpty else {
      print("forage-bench stream: no change reached the stream")
      return 1
    }
    func ms(_ values: [Double], _ q: Double) -> String {
      let sorted = values.sorted()
      let v = sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.down)))]
      return String(format: "%.3f ms", v * 1000)
    }
    let kind = path.hasPrefix("postgres") ? "PostgreSQL" : "SQLite"
    print("stream latency (\(kind), \(total.count) commits of one new record):")
    print("  commit start -> change yielded: median \(ms(total, 0.5)), p99 \(ms(total, 0.99))")
    print("  commit call alone:              median \(ms(commit, 0.5)), p99 \(ms(commit, 0.99))")
    return 0
  }

  /// Commits `commits` pages one at a time, each waiting for its change on
  /// the stream; the seconds from each commit's start to its yield, and of
  /// each commit call.
  static func measure(_ store: any Store, commits: Int) async throws -> (total: [Double], commit: [Double]) {
    // A source of its own, so that a store used before (a PostgreSQL
    // database given twice) starts a new crawl.
    let source = "bench-" + UUID().uuidString
    let crawl = try await store.openCrawl(
      source: source,
      seeds: (0..<commits).map {
        FrontierSeed(url: "https://bench.test/\($0)", fingerprint: UInt64($0 + 1) &* 0x9E37_79B9_7F4A_7C15, depth: 0)
      }, now: Date())
    let items = try await store.claim(
      crawl: crawl.id, limit: commits, lease: Lease(owner: "bench", for: .seconds(3600), at: Date()))
    let arrivals = AsyncStream<(Int64, ContinuousClock.Instant)>.makeStream()
    let stream = store.changes(source: source, after: .latest)
    let reader = Task {
      for try await change in stream { arrivals.continuation.yield((change.id, ContinuousClock.now)) }
    }
    defer { reader.cancel() }
    var received = arrivals.stream.makeAsyncIterator()
    var total: [Double] = []
    var commit: [Double] = []
    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }
    for (n, item) in items.enumerated() {
      let record = RecordInput(
        source: source, key: "k\(n)", url: item.url, fieldsJSON: #"{"n":\#(n)}"#, contentHash: UInt64(n))
      let started = ContinuousClock.now
      let written = try await store.commit([
        PageCommit(item: item, outcome: .done, page: nil, records: [record], discovered: [], now: Date())
      ])
      commit.append(seconds(ContinuousClock.now - started))
      guard let id = written.changes.last?.id else { continue }
      while let (arrived, at) = await received.next() {
        if arrived == id {
          total.append(seconds(at - started))
          break
        }
      }
    }
    return (total, commit)
  }
}
