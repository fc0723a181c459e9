import Foundation
import ForageHTTP
import ForageStore
import ForageURL

/// What one download's work in a session came to.
public enum DownloadResult: Sendable, Hashable {
  /// The file is in place, verified (``DownloadEntry/path``).
  case done
  /// Stopped by the deadline or cancellation; the bytes written are kept and it is
  /// queued for the next session.
  case interrupted(String)
  /// A transient failure outlasted this session's retries; queued again (with one
  /// more attempt counted) for a later session.
  case retryLater(String)
  /// Failed (a 404, verification failing every time, a full disk…). Its state is
  /// `failed`, except a full disk: that one stays queued while attempts are left.
  case failed(DownloadError)
  /// Another worker (another process) is writing it.
  case busy
}

/// A running download's progress, for a progress line.
public struct DownloadStatus: Sendable, Hashable {
  /// The download's identifier in the store.
  public var id: Int64
  /// The URL being downloaded.
  public var url: String
  /// The file name chosen so far, when one is.
  public var name: String?
  /// Bytes of the file so far (resumed bytes included).
  public var bytes: Int
  /// The file's size, when known.
  public var total: Int?
}

/// Background downloads: files that land in a folder exactly once, across
/// interruptions, process deaths and network failures.
///
///     let downloads = Downloads(store: store, transport: CurlTransport())
///     let entry = try await downloads.enqueue("https://example.com/data.zip", to: "/srv/data",
///                                             sha256: "9f86d081…")
///     _ = try await downloads.work(until: .now + .seconds(300))
///
/// State lives in the store (``DownloadEntry``). Bytes go to a part file beside the
/// destination (`NAME.forage-ID.part`), fsynced before the store records them, so a
/// crash never records more than the disk has; a restarted worker truncates the part
/// to what was recorded and resumes with `Range` and `If-Range` (the strong ETag, else
/// `Last-Modified`; without either, only when a SHA-256 will verify the result). A
/// server that ignores the range (200), answers 416, or whose file changed (the
/// validator no longer matches, so it sends 200) restarts the file from zero.
///
/// A complete file is checked against the expected size (else the server's) and
/// SHA-256; a mismatch empties the part and tries again, up to
/// ``DownloadSettings/maxAttempts``, then fails with both values named. A good file
/// is fsynced and hard-linked into place under a name that is free (`name`,
/// `name-1`…: nothing in the folder is ever replaced; a name SQLite would read as a
/// database's side file, such as `forage.sqlite-journal`, lands as
/// `forage.sqlite-journal.download`), the part's name removed, and the folder
/// fsynced. A done download is never fetched again unless asked
/// (``DownloadRequest/Repeat/again``). A download that fails leaves no part file
/// unless it holds bytes a later attempt resumes from.
///
/// Downloads go through a ``Fetcher``: give the crawl's, and they share its per-host
/// slots and delays (a download holds one of its host's slots while it runs).
/// An exclusive lock on the part file keeps two processes from writing one file.
public struct Downloads: Sendable {
  /// The store that keeps the downloads.
  public let store: any Store
  /// The settings.
  public let settings: DownloadSettings
  let fetcher: Fetcher
  let fetch: FetchSettings
  /// Whose claims this value works under (its own, or a background
  /// session's: see ``withOwner(_:)``).
  var owner: String

  /// Downloads through `fetcher` (share the crawl's to share its politeness);
  /// `fetch` gives the transfer limits downloads share with fetches (connect
  /// timeout, low-speed window, header size).
  public init(
    store: any Store, fetcher: Fetcher, fetch: FetchSettings = FetchSettings(),
    settings: DownloadSettings = DownloadSettings()
  ) {
    self.store = store
    self.fetcher = fetcher
    self.fetch = fetch
    self.settings = settings
    owner = "downloads-pid-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
  }

  /// Downloads through a fetcher of its own over `transport`.
  public init(
    store: any Store, transport: any Transport, fetch: FetchSettings = FetchSettings(),
    settings: DownloadSettings = DownloadSettings()
  ) {
    self.init(store: store, fetcher: Fetcher(transport: transport, settings: fetch), fetch: fetch, settings: settings)
  }

  // MARK: Queueing

  /// Queues `url` for `folder` (which must exist), or returns the download already
  /// kept for them (see ``DownloadRequest/Repeat`` for what happens to it).
  ///
  /// - Parameters:
  ///   - expectedSize: the file's size in bytes, when known (verified; bounds the body).
  ///   - sha256: the file's SHA-256 as 64 hex digits (verified).
  ///   - source: the source queueing it (a feed's enclosures).
  /// - Throws: ``DownloadError`` (`invalidURL`, `invalidChecksum`, `folder`); store errors.
  @discardableResult
  public func enqueue(
    _ url: String, to folder: String, expectedSize: Int? = nil, sha256: String? = nil, source: String? = nil,
    repeat: DownloadRequest.Repeat = .retryFailed
  ) async throws -> DownloadEntry {
    guard let parsed = WebURL(url), parsed.isHTTP, parsed.host != nil else {
      throw DownloadError(.invalidURL, "\(url) is not an absolute http or https URL")
    }
    let checksum = try sha256.map(Self.checksum)
    let absolute = try Self.folderPath(folder)
    let request = DownloadRequest(
      url: parsed.removingFragment.href, folder: absolute, expectedSize: expectedSize, expectedSHA256: checksum,
      source: source)
    return try await store.enqueueDownload(request, repeat: `repeat`, now: Date())
  }

  /// A SHA-256 given by a person: 64 hex digits, returned lowercase.
  ///
  /// - Throws: ``DownloadError`` of kind `invalidChecksum`.
  public static func checksum(_ text: String) throws(DownloadError) -> String {
    let hex = text.lowercased()
    guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
      throw DownloadError(.invalidChecksum, "\"\(text)\" is not a SHA-256: expected 64 hex digits")
    }
    return hex
  }

  /// The absolute, resolved path of an existing folder.
  ///
  /// - Throws: ``DownloadError`` of kind `folder`.
  static func folderPath(_ folder: String) throws(DownloadError) -> String {
    guard isFolder(folder), let resolved = realpath(folder, nil) else {
      throw DownloadError(.folder, "the folder \(folder) does not exist (or is not a folder)")
    }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  // MARK: Working

  /// Works on queued downloads, ``DownloadSettings/concurrency`` at a time, until
  /// none is left to claim, `deadline` passes, or the calling task is cancelled
  /// (running transfers stop, their bytes are kept). Each download is tried once per
  /// session (with its in-session retries).
  ///
  /// - Parameters:
  ///   - ids: only these downloads; nil for any queued one.
  ///   - maxRemaining: only downloads known to have at most this many bytes left.
  ///   - progress: called a few times a second for each running download.
  /// - Returns: what became of each download claimed.
  /// - Throws: store errors when claiming.
  public func work(
    ids: [Int64]? = nil, until deadline: ContinuousClock.Instant? = nil, maxRemaining: Int? = nil,
    progress: (@Sendable (DownloadStatus) -> Void)? = nil
  ) async throws -> [Int64: DownloadResult] {
    var results: [Int64: DownloadResult] = [:]
    let concurrency = max(1, settings.concurrency)
    try await withThrowingTaskGroup(of: (Int64, DownloadResult).self) { group in
      var running = 0
      var lastID: Int64 = 0
      var exhausted = false
      while true {
        let timeLeft = deadline.map { ContinuousClock.now < $0 } ?? true
        if !exhausted, running < concurrency, timeLeft, !Task.isCancelled {
          let want = concurrency - running
          let claimed = try await store.claimDownloads(
            ids: ids, afterID: lastID, limit: want, maxRemaining: maxRemaining, lease: lease())
          if claimed.count < want { exhausted = true }
          for entry in claimed {
            lastID = max(lastID, entry.id)
            running += 1
            group.addTask { (entry.id, await self.perform(entry, deadline: deadline, progress: progress)) }
          }
        }
        if running == 0 { break }
        guard let (id, result) = try await group.next() else { break }
        running -= 1
        results[id] = result
      }
    }
    return results
  }

  /// Works on `ids` until each is done or failed, or came to an end in this call
  /// (interrupted, to be retried later); while another process holds one, waits for
  /// it, reporting its recorded progress. What a command that waits calls.
  ///
  /// - Returns: the downloads as they ended, and what this call did with each.
  /// - Throws: store errors.
  public func complete(_ ids: [Int64], progress: (@Sendable (DownloadStatus) -> Void)? = nil) async throws
    -> [(entry: DownloadEntry, result: DownloadResult?)]
  {
    var results: [Int64: DownloadResult] = [:]
    while true {
      var entries: [DownloadEntry] = []
      for id in ids { if let entry = try await store.download(id: id) { entries.append(entry) } }
      let open = entries.filter { ($0.state == .queued || $0.state == .claimed) && !Self.ended(results[$0.id]) }
      if open.isEmpty || Task.isCancelled { return entries.map { ($0, results[$0.id]) } }
      let worked = try await work(ids: open.map(\.id), progress: progress)
      results.merge(worked) { $1 }
      if worked.values.allSatisfy({ $0 == .busy }) {
        // Others hold them: show their recorded progress, look again shortly. A
        // claim whose part file nobody has locked, and that has not been written
        // for a while, belongs to a worker that died: it is taken over now rather
        // than when its lease passes.
        var abandoned: [Int64] = []
        for entry in open {
          progress?(DownloadStatus(id: entry.id, url: entry.url, name: entry.name, bytes: entry.bytesWritten, total: entry.knownSize))
          if entry.state == .claimed, Date().timeIntervalSince(entry.updatedAt) > 2 * settings.checkpointInterval.seconds,
            PartFile.isUnlocked(entry.folder + "/" + Self.partName(entry))
          {
            abandoned.append(entry.id)
          }
        }
        if !abandoned.isEmpty {
          try await store.release(.download, owner: nil, ids: abandoned)
          continue
        }
        try? await Task.sleep(for: .milliseconds(300))
      }
    }
  }

  private static func ended(_ result: DownloadResult?) -> Bool {
    switch result {
    case nil, .busy?: false
    default: true
    }
  }

  // MARK: One download

  /// The name of the part file of `entry` in its folder.
  static func partName(_ entry: DownloadEntry) -> String {
    let base = WebURL(entry.url).flatMap(DownloadName.fromURL) ?? DownloadName.fallback
    return "\(base).forage-\(entry.id).part"
  }

  /// Works on one claimed download until it is done, failed, or interrupted; always
  /// leaves it released (or taken over by another worker).
  func perform(
    _ claimed: DownloadEntry, deadline: ContinuousClock.Instant?, progress: (@Sendable (DownloadStatus) -> Void)?
  ) async -> DownloadResult {
    do {
      return try await run(claimed, deadline: deadline, progress: progress)
    } catch let error as DownloadError {
      var entry = claimed
      entry.lastError = error.message
      if let latest = try? await store.download(id: claimed.id) { entry = latest }
      return (try? await fail(entry, error)) ?? .failed(error)
    } catch {
      // A store error: the claim lapses and a later session continues.
      return .retryLater("\(error)")
    }
  }

  private func run(
    _ claimed: DownloadEntry, deadline: ContinuousClock.Instant?, progress: (@Sendable (DownloadStatus) -> Void)?
  ) async throws -> DownloadResult {
    var entry = claimed
    guard let url = WebURL(entry.url), url.isHTTP else {
      return try await fail(entry, DownloadError(.invalidURL, "\(entry.url) is not an http or https URL"))
    }
    guard isFolder(entry.folder) else {
      return try await fail(entry, DownloadError(.folder, "the folder \(entry.folder) does not exist any more"))
    }
    let partPath = entry.folder + "/" + Self.partName(entry)
    if entry.path != nil {
      if let result = try await recoverLanding(&entry, partPath: partPath) { return result }
    }
    let part = try PartFile.open(partPath)
    guard part.tryLock() else {
      _ = try await save(entry, release: true)
      return .busy
    }
    var transientFailures = 0
    var restarts = 0
    while true {
      if Task.isCancelled { return try await interrupt(entry, "cancelled") }
      // The part holds what the store recorded, no more: bytes written after the
      // last checkpoint may not have reached the disk before a crash.
      var offset = entry.bytesWritten
      if part.size < offset || (offset > 0 && !Self.canResume(entry)) { offset = 0 }
      if offset == 0 {
        entry.etag = nil
        entry.lastModified = nil
      }
      try part.truncate(to: offset)
      entry.bytesWritten = offset

      var complete = offset > 0 && entry.knownSize == offset
      if !complete {
        let (outcome, lost) = await transfer(entry, url: url, part: part, offset: offset, deadline: deadline, progress: progress)
        if lost { return .busy }
        entry = outcome.entry
        guard try await save(entry) else { return .busy }
        switch outcome.result {
        case .answered(let head) where (200..<300).contains(head.status):
          complete = true
        case .answered(let head) where head.status == 416:
          // Nothing at or after `offset`: the part may already be whole (its size
          // unknown until now), or the file shrank: then start again.
          let length = head.headers["Content-Range"].flatMap(ContentRange.init)?.completeLength
          if let length, length == offset, offset > 0 {
            entry.totalSize = length
            complete = true
          } else {
            restarts += 1
            if restarts > 2 {
              return try await fail(entry, part: part, DownloadError(.http, "\(entry.url) answered 416 (range not satisfiable) again after restarting"))
            }
            entry.bytesWritten = 0
            entry.totalSize = nil
            continue
          }
        case .answered(let head) where [408, 425, 429].contains(head.status) || head.status >= 500:
          let message = "\(url.host ?? "the server") answered HTTP \(head.status) for \(entry.url)"
          if let result = try await transient(&entry, part: part, message, failures: &transientFailures, deadline: deadline) {
            return result
          }
          continue
        case .answered(let head):
          return try await fail(entry, part: part, DownloadError(.http, "\(entry.url) answered HTTP \(head.status)"))
        case .deferred(let reason):
          return try await interrupt(entry, reason)
        case .failed(let error as DownloadWriteError):
          return try await writeFailed(entry, error, partPath: partPath)
        case .failed(let error as FetchError):
          switch error.kind {
          case .cancelled:
            return try await interrupt(entry, "cancelled")
          case .budgetUnavailable:
            // The store failed, not the server: not an attempt of the download's.
            return try await interrupt(entry, error.message)
          case .bodyTooLarge:
            // Longer than it may be: as a failed verification.
            if let result = try await verificationFailed(&entry, part: part, "it is longer than \(entry.knownSize.map { "\($0) bytes" } ?? "the size limit")") {
              return result
            }
            continue
          case .invalidResponse where offset > 0:
            // A 206 for another range than asked: start again from zero.
            restarts += 1
            if restarts > 2 { return try await fail(entry, part: part, DownloadError(.transfer, error.message)) }
            entry.bytesWritten = 0
            continue
          default:
            if error.isTransient || error.kind == .invalidResponse {
              if let result = try await transient(&entry, part: part, error.message, failures: &transientFailures, deadline: deadline) {
                return result
              }
              continue
            }
            return try await fail(entry, part: part, DownloadError(.transfer, error.message))
          }
        case .failed(let error):
          return try await fail(entry, part: part, DownloadError(.transfer, "\(entry.url): \(error)"))
        }
      }
      guard complete else { continue }
      if let result = try await verifyAndLand(&entry, part: part, url: url) { return result }
    }
  }

  /// Checks a complete part against the expected size (else the server's) and
  /// SHA-256, then puts it in place. Nil when it failed verification and was
  /// emptied for another attempt (one more attempt is counted).
  func verifyAndLand(_ entry: inout DownloadEntry, part: PartFile, url: WebURL) async throws -> DownloadResult? {
    try part.sync()
    let size = part.size
    var problem: String?
    if let expected = entry.knownSize, size != expected {
      problem = "it has \(size) bytes, \(expected) expected"
    }
    var digest: String?
    if problem == nil, entry.expectedSHA256 != nil || settings.alwaysHash {
      let computed = try part.sha256(length: size)
      digest = computed
      if let wanted = entry.expectedSHA256, computed != wanted {
        problem = "its SHA-256 is \(computed), \(wanted) expected"
      }
    }
    if let problem {
      return try await verificationFailed(&entry, part: part, problem)
    }
    entry.bytesWritten = size
    return try await land(entry, part: part, url: url, sha256: digest ?? entry.expectedSHA256)
  }

  /// The outcome of one transfer and the entry as its bytes left it.
  private struct Transferred: Sendable {
    var result: DownloadOutcome
    var entry: DownloadEntry
  }

  /// One transfer from `offset`, checkpointing as it goes: every
  /// ``DownloadSettings/checkpointInterval`` the part is fsynced and then its length
  /// (and the answer's validator, size and name) recorded, renewing the claim. True
  /// beside it when the claim was lost (the transfer was then stopped).
  private func transfer(
    _ entry: DownloadEntry, url: WebURL, part: PartFile, offset: Int, deadline: ContinuousClock.Instant?,
    progress: (@Sendable (DownloadStatus) -> Void)?
  ) async -> (Transferred, lost: Bool) {
    var headers = HTTPHeaders()
    headers.add("Accept-Encoding", "identity")
    if offset > 0 {
      headers.add("Range", "bytes=\(offset)-")
      if let validator = Self.ifRange(entry) { headers.add("If-Range", validator) }
    }
    let requestHeaders = headers
    let limits = settings.limits(offset: offset, expectedSize: entry.expectedSize, fetch: fetch)
    let meter = DownloadProgress()
    let fetcher = self.fetcher
    enum Step: Sendable {
      case transferred(DownloadOutcome)
      case checkpoints(lost: Bool)
    }
    var outcome: DownloadOutcome = .deferred(reason: "not started")
    var lost = false
    await withTaskGroup(of: Step.self) { group in
      group.addTask {
        .transferred(
          await fetcher.download(
            url, into: part.fd, resumingAt: offset, headers: requestHeaders, limits: limits, deadline: deadline,
            progress: meter))
      }
      group.addTask { .checkpoints(lost: await self.checkpoints(entry, url: url, meter: meter, part: part, progress: progress)) }
      while let step = await group.next() {
        switch step {
        case .transferred(let result):
          outcome = result
          group.cancelAll()
        case .checkpoints(let wasLost):
          if wasLost {
            lost = true
            group.cancelAll()
          }
        }
      }
    }
    // The last bytes: on disk before they are recorded (by the caller).
    let snapshot = meter.snapshot
    var final = entry
    if snapshot.head != nil, (try? part.sync()) != nil {
      final = Self.applying(snapshot, to: entry, url: url)
    }
    if let head = snapshot.head {
      progress?(DownloadStatus(id: entry.id, url: entry.url, name: final.name, bytes: snapshot.fileSize, total: Self.total(final, head)))
    }
    return (Transferred(result: outcome, entry: final), lost)
  }

  /// The checkpoint loop beside a transfer, until cancelled; true when the claim was
  /// lost.
  private func checkpoints(
    _ entry: DownloadEntry, url: WebURL, meter: DownloadProgress, part: PartFile,
    progress: (@Sendable (DownloadStatus) -> Void)?
  ) async -> Bool {
    var lastCheckpoint = ContinuousClock.now
    while !Task.isCancelled {
      try? await Task.sleep(for: settings.progressInterval)
      if Task.isCancelled { break }
      let snapshot = meter.snapshot
      var current = entry
      if snapshot.head != nil { current = Self.applying(snapshot, to: entry, url: url) }
      progress?(
        DownloadStatus(
          id: entry.id, url: entry.url, name: current.name, bytes: snapshot.head == nil ? entry.bytesWritten : snapshot.fileSize,
          total: snapshot.head.map { Self.total(current, $0) } ?? entry.knownSize))
      guard ContinuousClock.now - lastCheckpoint >= settings.checkpointInterval else { continue }
      lastCheckpoint = ContinuousClock.now
      // Read the length, then fsync, then record: what is recorded is on disk.
      if snapshot.head != nil, (try? part.sync()) == nil { continue }
      let kept = (try? await store.updateDownload(current, lease: lease(), releasing: false)) ?? true
      if !kept { return true }
    }
    return false
  }

  /// `entry` as the bytes and the answer read in `snapshot` leave it.
  static func applying(_ snapshot: DownloadProgress.Snapshot, to entry: DownloadEntry, url: WebURL) -> DownloadEntry {
    guard let head = snapshot.head else { return entry }
    var e = entry
    e.bytesWritten = snapshot.fileSize
    e.etag = head.headers["ETag"]
    e.lastModified = head.headers["Last-Modified"]
    e.totalSize = head.representationLength ?? (head.status == 206 ? entry.totalSize : nil)
    if e.name == nil { e.name = DownloadName.suggested(headers: head.headers, url: url, answeredBy: head.url) }
    return e
  }

  private static func total(_ entry: DownloadEntry, _ head: ResponseHead) -> Int? {
    entry.expectedSize ?? head.representationLength ?? entry.totalSize
  }

  /// True when the part's bytes can be continued: there is a validator to send in
  /// `If-Range`, or an expected SHA-256 will catch a file that changed.
  static func canResume(_ entry: DownloadEntry) -> Bool {
    ifRange(entry) != nil || entry.expectedSHA256 != nil
  }

  /// The `If-Range` value: a strong ETag (RFC 9110 §13.1.5 forbids weak ones there),
  /// else `Last-Modified`.
  static func ifRange(_ entry: DownloadEntry) -> String? {
    if let etag = entry.etag, !etag.hasPrefix("W/"), !etag.isEmpty { return etag }
    return entry.lastModified
  }

  // MARK: Endings

  /// Writes `entry` under the claim (extended, or released); false when the claim
  /// was lost.
  @discardableResult
  func save(_ entry: DownloadEntry, release: Bool = false) async throws -> Bool {
    try await store.updateDownload(entry, lease: lease(), releasing: release)
  }

  /// This worker's lease on a download from now: ``DownloadSettings/lease`` long.
  func lease() -> Lease { Lease(owner: owner, for: settings.lease, at: Date()) }

  /// Records `entry` failed. With its `part` (open and locked by this worker), the
  /// part file goes when it holds nothing a later attempt could resume from: no
  /// bytes, or bytes of a file the server no longer has (an HTTP error).
  func fail(_ entry: DownloadEntry, part: PartFile? = nil, _ error: DownloadError) async throws -> DownloadResult {
    var entry = entry
    entry.state = .failed
    entry.lastError = error.message
    if let part {
      if error.kind == .http {
        entry.bytesWritten = 0
        entry.etag = nil
        entry.lastModified = nil
        entry.totalSize = nil
      }
      if entry.bytesWritten == 0 { part.remove() }
    }
    try await save(entry, release: true)
    return .failed(error)
  }

  func interrupt(_ entry: DownloadEntry, _ reason: String) async throws -> DownloadResult {
    var entry = entry
    entry.state = .queued
    try await save(entry, release: true)
    return .interrupted(reason)
  }

  /// A transient failure: retried in this session (after a growing pause, resuming)
  /// while retries and time are left (nil: go on), else queued for later with one
  /// more attempt, or failed after the last attempt.
  private func transient(
    _ entry: inout DownloadEntry, part: PartFile, _ message: String, failures: inout Int,
    deadline: ContinuousClock.Instant?
  ) async throws -> DownloadResult? {
    failures += 1
    let pause = settings.retryDelay * (1 << min(failures - 1, 10))
    let timeLeft = deadline.map { ContinuousClock.now + pause < $0 } ?? true
    if failures <= settings.retries, timeLeft, !Task.isCancelled {
      try? await Task.sleep(for: pause)
      return nil
    }
    entry.attempts += 1
    entry.lastError = message
    if entry.attempts >= settings.maxAttempts {
      return try await fail(
        entry, part: part,
        DownloadError(.transfer, "\(message) (\(entry.attempts) attempts; \(entry.bytesWritten) bytes kept)"))
    }
    entry.state = .queued
    try await save(entry, release: true)
    return .retryLater(message)
  }

  /// The file is not what it should be: the part is emptied and the download tried
  /// again (nil: go on), or after the last attempt the part is deleted and it fails.
  func verificationFailed(_ entry: inout DownloadEntry, part: PartFile, _ problem: String) async throws
    -> DownloadResult?
  {
    try part.truncate(to: 0)
    entry.bytesWritten = 0
    entry.etag = nil
    entry.lastModified = nil
    entry.totalSize = nil
    entry.attempts += 1
    entry.lastError = "verification failed: \(problem)"
    if entry.attempts >= settings.maxAttempts {
      part.remove()
      return try await fail(
        entry,
        DownloadError(
          .verification,
          "\(entry.url) failed verification \(entry.attempts) times (last: \(problem)); the part file was deleted"))
    }
    guard try await save(entry) else { return .busy }
    return nil
  }

  private func writeFailed(_ entry: DownloadEntry, _ error: DownloadWriteError, partPath: String) async throws
    -> DownloadResult
  {
    var entry = entry
    let message =
      error.isDiskFull
      ? "the disk is full in \(entry.folder): \(entry.bytesWritten) bytes are kept in \(partPath) for the next attempt"
      : "writing \(partPath) failed: \(error)"
    entry.attempts += 1
    entry.lastError = message
    entry.state = entry.attempts >= settings.maxAttempts ? .failed : .queued
    try await save(entry, release: true)
    return .failed(DownloadError(error.isDiskFull ? .diskFull : .folder, message))
  }

  /// Puts the verified part in place under a free name, then records it done. A
  /// name SQLite would take for a database's side file lands as `NAME.download`
  /// (``DownloadName/landing(_:)``), and the store's own path is never used.
  func land(_ entry: DownloadEntry, part: PartFile, url: WebURL, sha256: String?) async throws
    -> DownloadResult
  {
    var entry = entry
    let name = entry.name ?? DownloadName.suggested(headers: nil, url: url)
    entry.name = name
    // Never a name SQLite or the store would read as part of a store (a side
    // file of any database, the store itself): see SQLiteSideFiles.
    let store = (self.store as? SQLiteStore)?.path
    for candidate in DownloadName.candidates(DownloadName.landing(name)).prefix(10_000) {
      let destination = entry.folder + "/" + candidate
      if fileIdentity(destination) != nil || destination == part.path { continue }
      if SQLiteSideFiles.reservation(ofPath: destination, store: store) != nil { continue }
      // The path first: a worker stopped right after the link finds it there.
      entry.path = destination
      guard try await save(entry) else { return .busy }
      guard try part.land(at: destination) else { continue }
      syncFolder(entry.folder)
      entry.state = .done
      entry.sha256 = sha256
      entry.finishedAt = Date()
      entry.lastError = nil
      try await save(entry, release: true)
      return .done
    }
    return try await fail(entry, DownloadError(.folder, "no free name for \(name) in \(entry.folder)"))
  }

  /// A worker stopped while putting the file in place (the path is recorded): done
  /// when the file is there (the part linked or renamed to it), else nil (go on).
  private func recoverLanding(_ entry: inout DownloadEntry, partPath: String) async throws -> DownloadResult? {
    guard let path = entry.path else { return nil }
    let destination = fileIdentity(path)
    let part = fileIdentity(partPath)
    var landed = false
    if let destination, destination.regular {
      if let part, part.device == destination.device, part.inode == destination.inode {
        unlink(partPath)
        landed = true
      } else if part == nil, entry.bytesWritten > 0, destination.size == entry.bytesWritten {
        landed = true
      }
    }
    guard landed else {
      entry.path = nil
      return nil
    }
    syncFolder(entry.folder)
    entry.state = .done
    entry.sha256 = entry.sha256 ?? entry.expectedSHA256
    entry.finishedAt = Date()
    entry.lastError = nil
    try await save(entry, release: true)
    return .done
  }
}
