import Foundation

/// Where a download stands.
public enum DownloadState: String, Sendable, Hashable, CaseIterable {
  /// Waiting for a worker (new, interrupted, or failed and to be retried).
  case queued
  /// A worker holds it until its lease passes.
  case claimed
  /// The file is in place (``DownloadEntry/path``), verified.
  case done
  /// Given up on (``DownloadEntry/lastError`` says why); queued again only when asked.
  case failed
}

/// A download to queue: a URL and the folder its file lands in.
///
///     DownloadRequest(url: "https://example.com/data.csv", folder: "/srv/data",
///                     expectedSHA256: "9f86d081…")
public struct DownloadRequest: Sendable, Hashable {
  /// The absolute http(s) URL.
  public var url: String
  /// The destination folder, as an absolute path.
  public var folder: String
  /// The file's size in bytes when known: the body may not be longer, and a file of
  /// another size fails verification.
  public var expectedSize: Int?
  /// The file's SHA-256 as 64 lowercase hex digits, verified before it lands.
  public var expectedSHA256: String?
  /// The source that queued it (a feed's enclosures), nil for a person's request.
  public var source: String?

  /// A request for `url` into `folder`; the other parameters have their properties' meaning.
  public init(
    url: String, folder: String, expectedSize: Int? = nil, expectedSHA256: String? = nil, source: String? = nil
  ) {
    self.url = url
    self.folder = folder
    self.expectedSize = expectedSize
    self.expectedSHA256 = expectedSHA256
    self.source = source
  }

  /// What queueing does with the download that already exists for the same URL and
  /// folder.
  public enum Repeat: Sendable, Hashable {
    /// Leaves it as it is, whatever its state (a feed queueing what it saw before).
    case keep
    /// Queues a failed one again with its attempts reset, keeping its part file; a
    /// done one stays done (a person asking again for a file).
    case retryFailed
    /// Downloads it again from scratch even when done: a new file lands beside the
    /// old one (which is left alone).
    case again
  }
}

/// A download as the store keeps it.
public struct DownloadEntry: Sendable, Hashable {
  /// The download's identifier in the store.
  public var id: Int64
  /// The absolute http(s) URL.
  public var url: String
  /// The destination folder (absolute).
  public var folder: String
  /// The file name chosen for it (from `Content-Disposition` or the URL), once the
  /// first answer came; a suffix may still be added if it is taken when the file lands.
  public var name: String?
  /// The size the request expects, in bytes; nil when it names none.
  public var expectedSize: Int?
  /// The SHA-256 the request expects (lowercase hex); nil when it names none.
  public var expectedSHA256: String?
  /// The source that queued it (a feed's enclosures); nil for a person's request.
  public var source: String?
  /// Where the download stands.
  public var state: DownloadState
  /// Bytes of the part file known to be on disk (fsynced before they were recorded).
  public var bytesWritten: Int
  /// The whole file's size as the server said it, when it did.
  public var totalSize: Int?
  /// The `ETag` the written bytes came with (sent back in `If-Range`).
  public var etag: String?
  /// The `Last-Modified` the written bytes came with, for `If-Range` without an ETag.
  public var lastModified: String?
  /// Attempts that failed (verification, transient errors); bounded by the worker.
  public var attempts: Int
  /// Why the last attempt failed, for a person.
  public var lastError: String?
  /// The final path: set just before the part is renamed into place, so a worker
  /// interrupted in between knows where it went.
  public var path: String?
  /// The finished file's SHA-256 (lowercase hex), when it was computed.
  public var sha256: String?
  /// When it was queued.
  public var createdAt: Date
  /// When its row last changed.
  public var updatedAt: Date
  /// When its file landed; nil until it is done.
  public var finishedAt: Date?

  /// A download as the store keeps it; each parameter has its property's meaning.
  public init(
    id: Int64, url: String, folder: String, name: String? = nil, expectedSize: Int? = nil,
    expectedSHA256: String? = nil, source: String? = nil, state: DownloadState = .queued, bytesWritten: Int = 0,
    totalSize: Int? = nil, etag: String? = nil, lastModified: String? = nil, attempts: Int = 0,
    lastError: String? = nil, path: String? = nil, sha256: String? = nil, createdAt: Date, updatedAt: Date,
    finishedAt: Date? = nil
  ) {
    self.id = id
    self.url = url
    self.folder = folder
    self.name = name
    self.expectedSize = expectedSize
    self.expectedSHA256 = expectedSHA256
    self.source = source
    self.state = state
    self.bytesWritten = bytesWritten
    self.totalSize = totalSize
    self.etag = etag
    self.lastModified = lastModified
    self.attempts = attempts
    self.lastError = lastError
    self.path = path
    self.sha256 = sha256
    self.createdAt = createdAt
    self.updatedAt = updatedAt
    self.finishedAt = finishedAt
  }

  /// The size the file should have: the expected one, else the server's.
  public var knownSize: Int? { expectedSize ?? totalSize }

  /// Bytes still to download, when the size is known.
  public var remainingBytes: Int? { knownSize.map { max(0, $0 - bytesWritten) } }
}

extension DownloadEntry {
  /// Applies a repeated request for this entry's URL and folder, as every
  /// store does when it is asked again: `again` starts it over (a new name
  /// is chosen and nothing of the old part is trusted), `retryFailed`
  /// queues a failed one with fresh attempts, and an unfinished entry takes
  /// the request's expected size and hash when they changed. True when
  /// anything changed (the store then writes the entry back).
  package mutating func apply(_ request: DownloadRequest, repeat: DownloadRequest.Repeat) -> Bool {
    var changed = false
    switch (`repeat`, state) {
    case (.again, .done), (.again, .failed), (.again, .queued):
      state = .queued
      name = nil
      path = nil
      sha256 = nil
      finishedAt = nil
      bytesWritten = 0
      totalSize = nil
      etag = nil
      lastModified = nil
      attempts = 0
      lastError = nil
      changed = true
    case (.retryFailed, .failed):
      state = .queued
      attempts = 0
      changed = true
    default:
      break
    }
    if state != .done {
      if let size = request.expectedSize, size != expectedSize {
        expectedSize = size
        changed = true
      }
      if let hash = request.expectedSHA256, hash != expectedSHA256 {
        expectedSHA256 = hash
        changed = true
      }
    }
    return changed
  }
}
