#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import ForageHTTP
import ForageSupport
import ForageURL

/// `forage-bench fetch`: HTTP fetching speed of the transports.
///
///     forage-bench fetch --base http://127.0.0.1:8080 --pages 100 --requests 50000 --concurrency 16
///     forage-bench fetch --urls urls.txt --transport both
///
/// Fetches the URLs round-robin (from a file, one per line, or `BASE/page-I.html` for
/// I below `--pages`) with `--concurrency` requests in flight, and prints requests per
/// second and the CPU seconds the process used (user + system, from getrusage).
enum FetchBenchmark {
  static let usage = """
    Usage: forage-bench fetch (--urls FILE | --base URL [--pages N]) [options]

    Options:
      --urls FILE          URLs to fetch, one per line
      --base URL           generate URL/page-0.html … URL/page-(N-1).html
      --pages N            how many generated URLs (default 100)
      --requests N         total requests per transport (default 50000)
      --concurrency C      requests in flight (default 16)
      --transport T        curl, urlsession or both (default curl)
      --warmup N           requests before measuring (default 1000)
      --threads N          CurlTransport event-loop threads (default 1)
    """

  struct Options {
    var urls: [WebURL] = []
    var requests = 50_000
    var concurrency = 16
    var transports = ["curl"]
    var warmup = 1000
    var threads = 1
  }

  struct UsageError: Error, CustomStringConvertible {
    var description: String
  }

  static func run(_ arguments: [String]) throws -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
      print(usage)
      return 0
    }
    let options = try parse(arguments)
    for name in options.transports {
      let transport: any Transport
      switch name {
      #if canImport(CCurl)
      case "curl": transport = CurlTransport(threads: options.threads)
      #endif
      case "urlsession": transport = URLSessionTransport()
      default: throw UsageError(description: "unknown transport \(name)\n\n\(usage)")
      }
      _ = measure(transport, options: options, count: options.warmup)
      let result = measure(transport, options: options, count: options.requests)
      let rate = Double(result.ok) / result.seconds
      print(
        String(
          format: "%@: %d requests (%d failed) in %.2f s = %.0f requests/s, CPU %.2f s (%.1f µs CPU/request), concurrency %d%@",
          name, result.ok + result.failed, result.failed, result.seconds, rate, result.cpu,
          result.cpu / Double(max(1, result.ok)) * 1e6, options.concurrency,
          name == "curl" ? ", \(options.threads) loop thread(s)" : ""))
      if result.failed > 0, let error = result.firstError { print("\(name): first error: \(error)") }
    }
    return 0
  }

  static func parse(_ arguments: [String]) throws -> Options {
    var options = Options()
    var base: String?
    var file: String?
    var pages = 100
    var i = 0
    func value() throws -> String {
      i += 1
      guard i < arguments.count else { throw UsageError(description: "\(arguments[i - 1]) needs a value\n\n\(usage)") }
      return arguments[i]
    }
    func number() throws -> Int {
      let text = try value()
      guard let n = Int(text), n > 0 else { throw UsageError(description: "not a positive number: \(text)") }
      return n
    }
    while i < arguments.count {
      switch arguments[i] {
      case "--urls": file = try value()
      case "--base": base = try value()
      case "--pages": pages = try number()
      case "--requests": options.requests = try number()
      case "--concurrency": options.concurrency = try number()
      case "--warmup": options.warmup = try number()
      case "--threads": options.threads = try number()
      case "--transport":
        let name = try value()
        options.transports = name == "both" ? ["curl", "urlsession"] : [name]
      default: throw UsageError(description: "unknown option \(arguments[i])\n\n\(usage)")
      }
      i += 1
    }
    if let file {
      let text = try String(contentsOfFile: file, encoding: .utf8)
      options.urls = text.split(whereSeparator: \.isNewline).compactMap { WebURL(String($0)) }
    } else if let base {
      let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
      options.urls = (0..<pages).compactMap { WebURL("\(trimmed)/page-\($0).html") }
    }
    guard !options.urls.isEmpty else { throw UsageError(description: "no URLs to fetch\n\n\(usage)") }
    return options
  }

  struct Result: Sendable {
    var ok = 0
    var failed = 0
    var seconds = 0.0
    var cpu = 0.0
    var firstError: String?
  }

  /// Runs `count` requests with `options.concurrency` workers; blocks until done.
  static func measure(_ transport: any Transport, options: Options, count: Int) -> Result {
    let urls = options.urls
    let workers = options.concurrency
    let box = Locked(Result())
    let done = DispatchSemaphore(value: 0)
    let cpuBefore = cpuSeconds()
    let start = ContinuousClock.now
    Task {
      let results = await withTaskGroup(of: Result.self) { group in
        for worker in 0..<workers {
          if #available(macOS 15.0, iOS 18.0, *) {
            // On the curl loop thread when the transport offers it: no thread hop per request.
            group.addTask(executorPreference: executor(of: transport, worker: worker)) {
              await work(transport, urls: urls, first: worker, step: workers, count: count)
            }
          } else {
            group.addTask { await work(transport, urls: urls, first: worker, step: workers, count: count) }
          }
        }
        return await group.reduce(into: Result()) { total, part in
          total.ok += part.ok
          total.failed += part.failed
          total.firstError = total.firstError ?? part.firstError
        }
      }
      box.withLock { $0 = results }
      done.signal()
    }
    done.wait()
    var result = box.withLock { $0 }
    result.seconds = (ContinuousClock.now - start).secondsDouble
    result.cpu = cpuSeconds() - cpuBefore
    return result
  }

  /// One worker: requests `first`, `first + step`, … below `count`, one at a time.
  static func work(_ transport: any Transport, urls: [WebURL], first: Int, step: Int, count: Int) async -> Result {
    var result = Result()
    var index = first
    var request = Request(url: urls[0])
    request.headers["User-Agent"] = FetchDefaults.userAgent
    while index < count {
      request.url = urls[index % urls.count]
      do {
        let response = try await transport.fetch(request)
        if response.status == 200 {
          result.ok += 1
        } else {
          result.failed += 1
          if result.firstError == nil { result.firstError = "status \(response.status) for \(request.url)" }
        }
      } catch {
        result.failed += 1
        if result.firstError == nil { result.firstError = "\(error)" }
      }
      index += step
    }
    return result
  }

  /// The transport's own executor, if it has one.
  @available(macOS 15.0, iOS 18.0, *)
  static func executor(of transport: any Transport, worker: Int) -> (any TaskExecutor)? {
    #if canImport(CCurl)
    if let curl = transport as? CurlTransport {
      let executors = curl.taskExecutors
      return executors[worker % executors.count]
    }
    #endif
    return nil
  }

  /// User plus system CPU seconds of this process.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    #if canImport(Glibc)
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}

extension Duration {
  fileprivate var secondsDouble: Double {
    let (s, atto) = components
    return Double(s) + Double(atto) / 1e18
  }
}
