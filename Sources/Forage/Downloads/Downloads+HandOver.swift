#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import ForageHTTP
import ForageStore
import ForageURL

/// A download handed to a transfer that runs outside Forage (an iOS
/// background `URLSession`, which goes on while the app is suspended): what
/// the transfer's task carries (as its `taskDescription`) so that its file can
/// be taken in when it finishes, maybe in a later process of the app.
///
///     let handed = try await downloads.handOver(limit: 4, session: "com.example.downloads")
///     for d in handed { let task = session.downloadTask(with: d.url); task.taskDescription = d.taskDescription }
public struct HandedOverDownload: Sendable, Hashable, Codable {
  /// The download's id in the store.
  public var id: Int64
  /// The URL to fetch.
  public var url: URL
  /// Where the finished file is put first: the download's part file, beside
  /// its destination (same volume, so landing is a link, never a copy).
  public var partPath: String
  /// Whose claim the download is under: the session's, the same in every
  /// process of the app.
  public var owner: String

  /// The value as text, for a task's `taskDescription`.
  public var taskDescription: String {
    String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
  }

  /// The value a task's `taskDescription` carries; nil for a task Forage did not start.
  public init?(taskDescription: String?) {
    guard let text = taskDescription, let value = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)) else {
      return nil
    }
    self = value
  }

  init(id: Int64, url: URL, partPath: String, owner: String) {
    self.id = id
    self.url = url
    self.partPath = partPath
    self.owner = owner
  }

  /// Moves the finished file at `location` to the part file, at once: a
  /// background session deletes its file when its delegate method returns.
  /// A part file left by an earlier attempt is replaced (the session fetched
  /// the whole file); across volumes the file is copied, then renamed.
  ///
  /// - Throws: ``DownloadError`` of kind `folder` when the file cannot be moved.
  public func stage(_ location: URL) throws(DownloadError) {
    let from = location.path
    if rename(from, partPath) == 0 { return }
    let err = errno
    guard err == EXDEV else {
      throw DownloadError(.folder, "cannot move the downloaded file to \(partPath): \(String(cString: strerror(err)))")
    }
    let staging = partPath + ".incoming"
    unlink(staging)
    do {
      try FileManager.default.copyItem(atPath: from, toPath: staging)
    } catch {
      throw DownloadError(.folder, "cannot copy the downloaded file to \(staging): \(error.localizedDescription)")
    }
    guard rename(staging, partPath) == 0 else {
      let err = errno
      unlink(staging)
      throw DownloadError(.folder, "cannot move the downloaded file to \(partPath): \(String(cString: strerror(err)))")
    }
    unlink(from)
  }
}

extension Downloads {
  /// The owner of a background session's claims: the same in every process
  /// of the app, so a relaunched app can finish what an earlier one handed over.
  public static func owner(forSession identifier: String) -> String { "session:" + identifier }

  /// The same downloads, working under `owner`'s claims.
  func withOwner(_ owner: String) -> Downloads {
    var copy = self
    copy.owner = owner
    return copy
  }

  /// Claims up to `limit` queued downloads for the background session
  /// `session`, leased for `lease` (a background transfer may take days),
  /// and returns what its download tasks must carry.
  ///
  /// - Throws: store errors.
  public func handOver(limit: Int, session: String, lease: Duration = DownloadDefaults.handOverLease) async throws
    -> [HandedOverDownload]
  {
    let owner = Self.owner(forSession: session)
    let claimed = try await store.claimDownloads(
      ids: nil, afterID: 0, limit: limit, maxRemaining: nil, lease: Lease(owner: owner, for: lease, at: Date()))
    var handed: [HandedOverDownload] = []
    for entry in claimed {
      guard let url = URL(string: entry.url) else {
        _ = try await withOwner(owner).fail(entry, DownloadError(.invalidURL, "\(entry.url) is not an http or https URL"))
        continue
      }
      handed.append(
        HandedOverDownload(id: entry.id, url: url, partPath: entry.folder + "/" + Self.partName(entry), owner: owner))
    }
    return handed
  }

  /// Takes in a handed-over download whose transfer finished and whose file
  /// was staged (``HandedOverDownload/stage(_:)``): with a 2xx answer the
  /// file is verified and put in place exactly as a download Forage fetched
  /// itself (free name, never replacing anything, the store updated); a
  /// file that fails verification, or a 408/425/429/5xx answer, is queued
  /// again with one more attempt counted; other answers fail the download.
  ///
  /// - Parameters:
  ///   - status: the HTTP status of the answer.
  ///   - headers: its headers (name, validators, size).
  ///   - finalURL: the URL that answered, after redirects.
  public func finishHandedOver(
    _ handed: HandedOverDownload, status: Int, headers: HTTPHeaders, finalURL: URL? = nil
  ) async -> DownloadResult {
    let worker = withOwner(handed.owner)
    do {
      guard var entry = try await store.download(id: handed.id), entry.state == .claimed else { return .busy }
      guard let url = WebURL(entry.url) else {
        return try await worker.fail(entry, DownloadError(.invalidURL, "\(entry.url) is not an http or https URL"))
      }
      let part = try PartFile.open(handed.partPath)
      guard part.tryLock() else { return .busy }
      guard (200..<300).contains(status) else {
        part.remove()
        entry.bytesWritten = 0
        let message = "\(url.host ?? "the server") answered HTTP \(status) for \(entry.url)"
        if [408, 425, 429].contains(status) || status >= 500 {
          return try await worker.retryHandedOver(entry, message)
        }
        return try await worker.fail(entry, DownloadError(.http, "\(entry.url) answered HTTP \(status)"))
      }
      entry.etag = headers["ETag"]
      entry.lastModified = headers["Last-Modified"]
      entry.totalSize = headers["Content-Length"].flatMap { Int($0) }
      entry.bytesWritten = part.size
      if entry.name == nil {
        entry.name = DownloadName.suggested(
          headers: headers, url: url, answeredBy: finalURL.flatMap { WebURL($0.absoluteString) })
      }
      if let result = try await worker.verifyAndLand(&entry, part: part, url: url) { return result }
      // Failed verification: emptied, one more attempt counted; a later session tries again.
      let reason = entry.lastError ?? "verification failed"
      guard try await worker.interrupt(entry, reason) != .busy else { return .busy }
      return .retryLater(reason)
    } catch let error as DownloadError {
      if let entry = try? await store.download(id: handed.id), let result = try? await worker.fail(entry, error) {
        return result
      }
      return .failed(error)
    } catch {
      return .retryLater("\(error)")
    }
  }

  /// A handed-over transfer that failed (no file: a lost connection, a
  /// timeout, the session cancelled): queued again with one more attempt
  /// counted, or failed after the last.
  public func handOverFailed(_ handed: HandedOverDownload, message: String) async -> DownloadResult {
    let worker = withOwner(handed.owner)
    do {
      guard let entry = try await store.download(id: handed.id), entry.state == .claimed else { return .busy }
      return try await worker.retryHandedOver(entry, message)
    } catch {
      return .retryLater("\(error)")
    }
  }

  private func retryHandedOver(_ entry: DownloadEntry, _ message: String) async throws -> DownloadResult {
    var entry = entry
    entry.attempts += 1
    entry.lastError = message
    if entry.attempts >= settings.maxAttempts {
      return try await fail(entry, DownloadError(.transfer, "\(message) (\(entry.attempts) attempts)"))
    }
    entry.state = .queued
    try await save(entry, release: true)
    return .retryLater(message)
  }
}
