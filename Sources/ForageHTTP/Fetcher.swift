import Foundation
import ForageURL

/// Validators remembered from an earlier fetch of the same URL; the ``Fetcher`` sends
/// them as `If-None-Match` and `If-Modified-Since`.
///
/// - SeeAlso: <https://www.rfc-editor.org/rfc/rfc9110#name-conditional-requests>
public struct Validators: Sendable, Hashable {
  /// The `ETag` received last time, as sent (quotes included).
  public var etag: String?
  /// The `Last-Modified` received last time.
  public var lastModified: String?

  /// Creates validators.
  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  /// The validators of `response`, or nil when it has none.
  public init?(_ response: Response) {
    etag = response.headers["ETag"]
    lastModified = response.headers["Last-Modified"]
    if etag == nil && lastModified == nil { return nil }
  }
}

/// How a ``Fetcher/fetch(_:settings:validators:deadline:scope:)`` ended.
public enum FetchOutcome: Sendable {
  /// A response (any status, after redirects).
  case fetched(Response)
  /// 304 Not Modified: the stored copy is current; no body.
  case notModified(Response)
  /// Not started (or not continued) because it could not finish before the deadline;
  /// fetch it in a later task.
  case deferred(reason: String)
  /// robots.txt forbids this URL (the original or a redirect target).
  case disallowed(WebURL)
  /// robots.txt of this URL's origin could not be had (5xx, 429, a network
  /// failure), so RFC 9309 treats the site as disallowed until it answers;
  /// `reason` says what went wrong. Worth trying again on a later launch.
  case robotsUnreachable(WebURL, reason: String)
  /// A redirect led out of the crawl scope.
  case outOfScope(WebURL)
  /// No usable response.
  case failed(FetchError)
}

/// Fetches URLs politely on top of a ``Transport``: follows redirects itself (each hop
/// checked against robots.txt, the scope and per-host limits), retries transient
/// failures with backoff, keeps per-host concurrency and delays (adaptive, slowing on
/// 429/503), sends conditional headers, and respects a deadline.
///
///     let fetcher = Fetcher(transport: CurlTransport())
///     switch await fetcher.fetch(url, validators: stored, deadline: .now + .seconds(25)) {
///     case .fetched(let response): parse(response.body)
///     case .notModified: break
///     case .deferred: requeue(url)
///     case .robotsUnreachable: retryLater(url)
///     case .disallowed, .outOfScope, .failed: skip(url)
///     }
public actor Fetcher {
  // Not private: downloads (`DownloadFetcher.swift`) share the transport, the
  // settings, the clock and the per-host slots below.
  let transport: any Transport
  let settings: FetchSettings
  let clock = ContinuousClock()
  private var random: AnyRandom
  private let environment: [String: String]
  private let cookies = CookieJar()

  /// Per-host politeness, boxed so that updating a slot is one lookup and
  /// no copy (a dictionary's in-place update of a value allocates).
  private var slots: [String: SlotBox] = [:]
  private var globalActive = 0
  /// Suspended acquirers per key, each with the timer that ends its wait at
  /// the deadline (cancelled when it is woken earlier, so no timer outlives
  /// its wait).
  private var waiters: [String: [(id: Int, continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>?)]] = [:]
  private var nextWaiterID = 0
  private var robotsCache = RobotsCache()
  private let robotsArchive: (any RobotsArchive)?
  /// Politeness shared with other processes (a fleet), and the tickets it
  /// gave for the requests in flight, by host key.
  private let hostBudget: (any SharedHostBudget)?
  private var tickets: [String: [Int64]] = [:]
  /// How long a request waits before asking a busy shared host budget again.
  private static let hostBudgetPoll: Duration = .milliseconds(20)
  private var robotsLoading: [String: Task<(RobotsRules, Duration), Never>] = [:]

  private static let globalKey = "*"

  /// Creates a fetcher; `settings` are the defaults and set the global concurrency.
  /// With `robotsArchive`, robots.txt answers are looked up there before they are
  /// downloaded, and kept there after (see ``RobotsArchive``). With
  /// `hostBudget`, each host's politeness is also shared with other processes
  /// (see ``SharedHostBudget``).
  public init(
    transport: any Transport, settings: FetchSettings = .init(), robotsArchive: (any RobotsArchive)? = nil,
    hostBudget: (any SharedHostBudget)? = nil
  ) {
    self.init(
      transport: transport, settings: settings, random: SystemRandomNumberGenerator(),
      environment: ProcessInfo.processInfo.environment, robotsArchive: robotsArchive, hostBudget: hostBudget)
  }

  /// Creates a fetcher with injected randomness (retry jitter) and environment
  /// (credentials).
  init(
    transport: any Transport, settings: FetchSettings, random: some RandomNumberGenerator,
    environment: [String: String], robotsArchive: (any RobotsArchive)? = nil,
    hostBudget: (any SharedHostBudget)? = nil
  ) {
    self.hostBudget = hostBudget
    self.transport = transport
    self.settings = settings
    self.random = AnyRandom(base: random)
    self.environment = environment
    self.robotsArchive = robotsArchive
  }

  /// The robots.txt rules for `url`'s origin, fetched once and cached; nil for URLs
  /// that are not http or https.
  public func robots(for url: WebURL) async -> RobotsRules? {
    await robots(for: url, settings: settings)
  }

  private enum RobotsLookup { case rules(RobotsRules), notHTTP, timedOut }

  /// The rules for `url`, waiting for them at most until `deadline` (the download goes
  /// on in the background and is cached for the next fetch).
  private func robots(for url: WebURL, settings: FetchSettings, deadline: ContinuousClock.Instant?) async
    -> RobotsLookup
  {
    guard url.isHTTP else { return .notHTTP }
    if let rules = robotsCache.rules(for: url.origin, now: clock.now) { return .rules(rules) }
    guard let deadline else {
      return await robots(for: url, settings: settings).map { .rules($0) } ?? .notHTTP
    }
    let clock = self.clock
    return await withTaskGroup(of: RobotsLookup.self) { group in
      group.addTask {
        await self.robots(for: url, settings: settings).map { .rules($0) } ?? .notHTTP
      }
      group.addTask {
        try? await clock.sleep(until: deadline)
        return .timedOut
      }
      let first = await group.next() ?? .timedOut
      group.cancelAll()
      return first
    }
  }

  private func robots(for url: WebURL, settings: FetchSettings) async -> RobotsRules? {
    guard url.isHTTP else { return nil }
    let origin = url.origin
    if let rules = robotsCache.rules(for: origin, now: clock.now) { return rules }
    let task: Task<(RobotsRules, Duration), Never>
    if let loading = robotsLoading[origin] {
      task = loading
    } else {
      let transport = self.transport
      let archive = robotsArchive
      task = Task {
        let answer: RobotsAnswer
        if let kept = await archive?.robotsAnswer(origin: origin), kept.expiresAt > Date() {
          answer = kept
        } else if let archive, !(await archive.claimRobotsFetch(origin: origin)),
          let kept = await Self.awaitRobotsAnswer(archive, origin: origin)
        {
          // Another worker of the fleet downloaded it.
          answer = kept
        } else {
          answer = await RobotsCache.fetch(origin: url, transport: transport, settings: settings)
          await archive?.keepRobotsAnswer(answer)
        }
        let lifetime = Duration.seconds(max(0, answer.expiresAt.timeIntervalSinceNow))
        return (answer.rules(for: settings.robotsProductToken), lifetime)
      }
      robotsLoading[origin] = task
    }
    let (rules, lifetime) = await task.value
    if robotsLoading[origin] == task {
      robotsLoading[origin] = nil
      robotsCache.store(rules, for: origin, lifetime: lifetime, now: clock.now)
    }
    return rules
  }

  /// The answer another process is downloading, once it keeps it in
  /// `archive`; nil when none came within ``robotsFleetWait`` (the fetcher
  /// then downloads it itself).
  private static func awaitRobotsAnswer(_ archive: any RobotsArchive, origin: String) async -> RobotsAnswer? {
    let clock = ContinuousClock()
    let giveUp = clock.now + robotsFleetWait
    while clock.now < giveUp, !Task.isCancelled {
      try? await clock.sleep(for: .milliseconds(100))
      if let kept = await archive.robotsAnswer(origin: origin), kept.expiresAt > Date() { return kept }
    }
    return nil
  }

  /// How long a fetcher waits for another process's robots.txt download.
  static let robotsFleetWait: Duration = .seconds(15)

  /// Fetches `url`, following redirects itself (each hop checked against robots.txt,
  /// `scope` and per-host limits; at most `maxRedirects`; loops detected), with
  /// retries, politeness and conditional headers.
  ///
  /// - Parameters:
  ///   - settings: a source's own settings, replacing the fetcher's for this call.
  ///   - validators: sent as `If-None-Match` / `If-Modified-Since`; a 304 becomes
  ///     ``FetchOutcome/notModified(_:)``.
  ///   - deadline: no request starts that the host's observed latency says would end
  ///     after it, and none runs past it: both end in ``FetchOutcome/deferred(reason:)``.
  ///   - scope: redirect targets it rejects end in ``FetchOutcome/outOfScope(_:)``.
  public func fetch(
    _ url: WebURL, settings: FetchSettings? = nil, validators: Validators? = nil,
    deadline: ContinuousClock.Instant? = nil, scope: (@Sendable (WebURL) -> Bool)? = nil
  ) async -> FetchOutcome {
    let settings = settings ?? self.settings
    let first = url.removingFragment
    var current = first
    var chain: [WebURL] = []
    // Filled at the first redirect: most fetches have none.
    var visited: Set<String> = []
    var bytes = 0
    while true {
      if !chain.isEmpty, let scope, !scope(current) { return .outOfScope(current) }
      if settings.robotsTxt {
        let rules: RobotsRules?
        switch await robots(for: current, settings: settings, deadline: deadline) {
        case .rules(let found): rules = found
        case .notHTTP: rules = nil
        case .timedOut:
          return .deferred(reason: "robots.txt of \(current.host ?? "the host") did not arrive before the deadline")
        }
        if let rules, !rules.isAllowed(current) {
          if let reason = rules.unreachable { return .robotsUnreachable(current, reason: reason) }
          return .disallowed(current)
        }
        if let crawlDelay = rules?.crawlDelay, let key = Self.key(current) {
          slotBox(key, settings).slot.raiseMinDelay(to: crawlDelay)
        }
      }
      let outcome = await fetchWithRetries(
        current, original: first, settings: settings,
        validators: chain.isEmpty ? validators : nil, deadline: deadline)
      guard case .fetched(var response) = outcome else { return outcome }
      bytes += response.bytesReceived
      response.bytesReceived = bytes
      if response.isRedirect, let location = response.headers["Location"] {
        if visited.isEmpty { visited.insert(first.href) }
        let next: WebURL
        switch Self.redirectTarget(
          from: current, to: location, hops: chain.count, maxRedirects: settings.maxRedirects, visited: &visited)
        {
        case .success(let url): next = url
        case .failure(let error): return .failed(error)
        }
        chain.append(current)
        current = next
        continue
      }
      response.redirectChain = chain
      if response.status == 304 {
        response.body = []
        return .notModified(response)
      }
      return .fetched(response)
    }
  }

  /// Where a redirect from `current` to `location` leads, after `hops`
  /// redirects already followed: the absolute URL, recorded in `visited`; or
  /// the error when it is one too many, no URL, or back to a URL visited.
  /// Fetches and downloads follow redirects by this one rule.
  static func redirectTarget(
    from current: WebURL, to location: String, hops: Int, maxRedirects: Int, visited: inout Set<String>
  ) -> Result<WebURL, FetchError> {
    guard hops < maxRedirects else {
      return .failure(
        FetchError(
          .tooManyRedirects, host: current.host,
          "more than maxRedirects (\(maxRedirects)) redirects, last from \(current.host ?? "?")"))
    }
    guard let next = current.resolving(location)?.removingFragment else {
      return .failure(
        FetchError(.invalidResponse, host: current.host, "\(current.host ?? "the server") redirected to an invalid URL"))
    }
    guard visited.insert(next.href).inserted else {
      return .failure(
        FetchError(.redirectLoop, host: next.host, "redirect loop through \(next.host ?? "?") after \(hops + 1) hops"))
    }
    return .success(next)
  }

  /// One hop: politeness, the request, and retries of transient failures.
  private func fetchWithRetries(
    _ url: WebURL, original: WebURL, settings: FetchSettings, validators: Validators?,
    deadline: ContinuousClock.Instant?
  ) async -> FetchOutcome {
    guard let key = Self.key(url) else {
      return .failed(FetchError(.invalidURL, host: url.host, "only http and https URLs with a host can be fetched"))
    }
    if let problem = credentialProblem(for: url, original: original, settings: settings) { return .failed(problem) }
    let policy = RetryPolicy(
      maxRetries: settings.retries, baseDelay: settings.retryBaseDelay, maxDelay: settings.retryMaxDelay)
    var attempt = 0
    while true {
      switch await acquire(key, settings: settings, deadline: deadline) {
      case .deferred(let reason): return .deferred(reason: reason)
      case .cancelled: return .failed(.cancelled(host: url.host))
      case .budgetUnavailable(let error): return .failed(.budgetUnavailable(host: url.host, error))
      case .acquired: break
      }
      var request = Request(url: url, limits: settings.limits, proxy: settings.proxy)
      var cutByDeadline = false
      if let deadline, deadline - clock.now < request.limits.timeout {
        request.limits.timeout = max(.milliseconds(1), deadline - clock.now)
        cutByDeadline = true
      }
      request.headers = headers(for: url, original: original, settings: settings, validators: validators)
      let start = clock.now
      let result: Result<Response, FetchError>
      do {
        result = .success(try await transport.fetch(request))
      } catch let error as FetchError {
        result = .failure(error)
      } catch {
        result = .failure(
          FetchError(
            .transport, host: url.host, "fetching from \(url.host ?? "the server") failed",
            detail: String(reflecting: error)))
      }
      let elapsed = clock.now - start

      let retryWait: Duration?
      switch result {
      case .success(let response):
        let retryAfter = response.headers["Retry-After"].flatMap { RetryPolicy.parseRetryAfter($0) }
        let outcome: HostSlot.Outcome =
          response.status == 429 || response.status == 503
          ? .throttled(retryAfter: retryAfter) : .response(status: response.status)
        release(key, elapsed: elapsed, outcome: outcome)
        if settings.cookies { cookies.store(response.headers, from: url) }
        guard policy.shouldRetry(status: response.status),
          let wait = policy.delay(attempt: attempt, retryAfter: retryAfter, using: &random)
        else { return .fetched(response) }
        retryWait = wait
        if let deadline, clock.now + wait > deadline { return .fetched(response) }
      case .failure(let error):
        if cutByDeadline && error.kind == .timeout {
          // Not the host's fault: the budget ran out mid-transfer.
          release(key, elapsed: elapsed, outcome: .abandoned)
          return .deferred(reason: "the deadline passed while fetching from \(url.host ?? "the host")")
        }
        release(key, elapsed: elapsed, outcome: error.kind == .cancelled ? .abandoned : .failed)
        guard policy.shouldRetry(error: error), !Task.isCancelled,
          let wait = policy.delay(attempt: attempt, using: &random)
        else { return .failed(error) }
        retryWait = wait
        if let deadline, clock.now + wait > deadline { return .failed(error) }
      }
      attempt += 1
      if let retryWait, retryWait > .zero {
        do {
          try await clock.sleep(for: retryWait)
        } catch {
          return .failed(.cancelled(host: url.host))
        }
      }
    }
  }

  /// Why the request to `url` cannot carry its credentials, or nil: a
  /// value read from the environment that would add or cut headers is
  /// refused (the fetch fails, saying which variable), never sent nor
  /// silently left out.
  func credentialProblem(for url: WebURL, original: WebURL, settings: FetchSettings) -> FetchError? {
    guard Self.mayReceiveCredentials(url, original: original, settings: settings) else { return nil }
    for credential in settings.credentials {
      if let bad = credential.unsendableVariable(environment: environment) {
        return .unsendableCredential(host: url.host, variable: bad.variable, header: bad.header, problem: bad.problem)
      }
    }
    return nil
  }

  func headers(
    for url: WebURL, original: WebURL, settings: FetchSettings, validators: Validators?
  ) -> HTTPHeaders {
    var headers = HTTPHeaders()
    headers.add("User-Agent", settings.userAgent)
    for (name, value) in settings.headers.sorted(by: { $0.key < $1.key }) {
      headers.replaceOrAdd(name, value)
    }
    if let etag = validators?.etag { headers.replaceOrAdd("If-None-Match", etag) }
    if let lastModified = validators?.lastModified {
      headers.replaceOrAdd("If-Modified-Since", lastModified)
    }
    if Self.mayReceiveCredentials(url, original: original, settings: settings) {
      for credential in settings.credentials {
        if let header = credential.header(environment: environment) { headers.replaceOrAdd(header.name, header.value) }
      }
    }
    if settings.cookies, let cookie = cookies.header(for: url) {
      headers.replaceOrAdd("Cookie", cookie)
    }
    return headers
  }

  /// True when a request to `url`, in a fetch that started at `original`, may
  /// carry the settings' credentials: `url` is one of the credential origins (the
  /// starting origin when none are named), and no redirect went from https down to
  /// http on the way.
  static func mayReceiveCredentials(_ url: WebURL, original: WebURL, settings: FetchSettings) -> Bool {
    guard !settings.credentials.isEmpty else { return false }
    if original.scheme == "https" && url.scheme != "https" { return false }
    if settings.credentialOrigins.isEmpty { return url.origin == original.origin }
    return settings.credentialOrigins.contains(url.origin)
  }

  // MARK: Per-host and global slots

  enum Acquired { case acquired, deferred(String), cancelled, budgetUnavailable(any Error) }

  static func key(_ url: WebURL) -> String? {
    guard url.isHTTP else { return nil }
    return url.origin
  }

  /// A host's slot, created with `settings` on first use.
  private func slotBox(_ key: String, _ settings: FetchSettings) -> SlotBox {
    if let box = slots[key] { return box }
    let box = SlotBox(Self.slot(settings))
    slots[key] = box
    return box
  }

  /// A ``HostSlot`` by reference; only touched on the fetcher's actor.
  private final class SlotBox {
    var slot: HostSlot
    init(_ slot: HostSlot) { self.slot = slot }
  }

  private static func slot(_ settings: FetchSettings) -> HostSlot {
    HostSlot(
      concurrency: settings.perHostConcurrency, minDelay: settings.perHostDelay,
      maxDelay: settings.maxPerHostDelay, adaptive: settings.adaptiveDelay)
  }

  func acquire(_ key: String, settings: FetchSettings, deadline: ContinuousClock.Instant?) async
    -> Acquired
  {
    while true {
      if Task.isCancelled { return .cancelled }
      let now = clock.now
      if let deadline, now >= deadline { return .deferred("the deadline passed while waiting for \(key)") }
      let box = slotBox(key, settings)
      box.slot.concurrency = max(1, settings.perHostConcurrency)
      box.slot.adaptive = settings.adaptiveDelay
      // AutoThrottle aims at this many requests in flight: as many as the host allows.
      box.slot.targetConcurrency = Double(box.slot.concurrency)
      // Sources sharing a host get the politest delay any of them asked for.
      box.slot.raiseMinDelay(to: settings.perHostDelay)
      switch box.slot.admission(now: now) {
      case .start:
        if globalActive >= self.settings.concurrency {
          await wait(on: Self.globalKey, until: deadline)
          continue
        }
        if let deadline, let expected = box.slot.expectedLatency, now + expected > deadline {
          return .deferred(
            "\(key) takes about \(formatDuration(expected)), more than the time left before the deadline")
        }
        box.slot.started(now: now)
        globalActive += 1
        guard let hostBudget else { return .acquired }
        // This process admits the request; the fleet must too. The local slot
        // is held meanwhile, and given back if the wait ends without a ticket.
        let lease = settings.limits.timeout + .seconds(5)
        while true {
          let delay = box.slot.delay
          let ticket: Int64?
          do {
            ticket = try await hostBudget.take(host: key, concurrency: box.slot.concurrency, delay: delay, lease: lease)
          } catch {
            releaseLocal(key, elapsed: .zero, outcome: .abandoned)
            return .budgetUnavailable(error)
          }
          if let ticket {
            tickets[key, default: []].append(ticket)
            return .acquired
          }
          if Task.isCancelled {
            releaseLocal(key, elapsed: .zero, outcome: .abandoned)
            return .cancelled
          }
          if let deadline, clock.now + Self.hostBudgetPoll >= deadline {
            releaseLocal(key, elapsed: .zero, outcome: .abandoned)
            return .deferred("\(key) was busy with other workers of the fleet until the deadline")
          }
          try? await clock.sleep(for: Self.hostBudgetPoll)
        }
      case .wait(let until):
        if let deadline, until > deadline {
          return .deferred("the per-host delay of \(key) ends after the deadline")
        }
        passGlobalTurn()
        do { try await clock.sleep(until: until) } catch { return .cancelled }
      case .full:
        passGlobalTurn()
        await wait(on: key, until: deadline)
      }
    }
  }

  /// A woken global waiter that cannot use the free global capacity hands it on.
  private func passGlobalTurn() {
    if globalActive < settings.concurrency { wakeOne(Self.globalKey) }
  }

  func release(_ key: String, elapsed: Duration, outcome: HostSlot.Outcome) {
    if let hostBudget, let ticket = tickets[key]?.popLast() {
      Task { await hostBudget.give(host: key, ticket: ticket) }
    }
    releaseLocal(key, elapsed: elapsed, outcome: outcome)
  }

  /// Ends a request in this process's books only.
  private func releaseLocal(_ key: String, elapsed: Duration, outcome: HostSlot.Outcome) {
    if let box = slots[key] { box.slot.finished(now: clock.now, elapsed: elapsed, outcome: outcome) }
    globalActive -= 1
    wakeOne(key)
    wakeOne(Self.globalKey)
  }

  /// Suspends until `wakeOne(key)`, the deadline, or cancellation.
  private func wait(on key: String, until deadline: ContinuousClock.Instant?) async {
    let id = nextWaiterID
    nextWaiterID += 1
    await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let timer = deadline.map { deadline in
          Task { [clock] in
            guard (try? await clock.sleep(until: deadline)) != nil else { return }
            self.wake(key, id: id)
          }
        }
        waiters[key, default: []].append((id, continuation, timer))
      }
    } onCancel: {
      Task { await self.wake(key, id: id) }
    }
  }

  private func wake(_ key: String, id: Int) {
    guard let index = waiters[key]?.firstIndex(where: { $0.id == id }) else { return }
    let waiter = waiters[key]!.remove(at: index)
    waiter.timer?.cancel()
    waiter.continuation.resume()
  }

  private func wakeOne(_ key: String) {
    guard let list = waiters[key], !list.isEmpty else { return }
    let waiter = waiters[key]!.removeFirst()
    if waiters[key]?.isEmpty == true { waiters[key] = nil }
    waiter.timer?.cancel()
    waiter.continuation.resume()
  }
}

/// A type-erased random number generator (jitter is injectable for tests).
struct AnyRandom: RandomNumberGenerator {
  var base: any RandomNumberGenerator
  mutating func next() -> UInt64 { base.next() }
}
