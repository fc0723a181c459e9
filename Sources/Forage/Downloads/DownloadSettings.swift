import ForageHTTP

/// The defaults of ``DownloadSettings``, in one place.
public enum DownloadDefaults {
  /// The most bytes a download without an expected size may have (64 GiB).
  public static let maxSize = 64 << 30
  /// With an expected size, the body may run this far past it before it is cut
  /// (and then fails verification): a server that sends an endless body is
  /// stopped near the size it should have had.
  public static let sizeSlack = 64 << 10
  /// The part file is fsynced, and its length recorded, at least this often
  /// while bytes arrive: at most this much work is lost to a crash.
  public static let checkpointInterval: Duration = .seconds(1)
  /// Progress is reported this often while a download runs.
  public static let progressInterval: Duration = .milliseconds(250)
  /// A download whose verification or transfer failed this many times is failed.
  public static let maxAttempts = 3
  /// A transient failure (a reset, a 503) is retried this many times within one
  /// working session, resuming each time, before it waits for a later one.
  public static let retries = 2
  /// The first retry waits this long; each later one twice as long.
  public static let retryDelay: Duration = .milliseconds(500)
  /// A claim lasts this long past its last checkpoint; a killed worker's downloads
  /// are taken over after it.
  public static let lease: Duration = .seconds(60)
  /// A short launch (an app refresh) starts only downloads with at most this many
  /// bytes left, known from an expected size or from an earlier answer.
  public static let smallSize = 2 << 20
  /// Downloads running at once in one working session.
  public static let concurrency = 2
  /// The longest one transfer may take; deadlines and the low-speed window end
  /// transfers long before it in practice.
  public static let transferTimeout: Duration = .seconds(24 * 3600)
  /// How long a download handed to a background `URLSession` stays claimed
  /// by it (``Downloads/handOver(limit:session:lease:)``): iOS may take
  /// hours or days to transfer a discretionary download.
  public static let handOverLease: Duration = .seconds(7 * 24 * 3600)
  /// The longest file name chosen, in UTF-8 bytes (file systems allow 255; the
  /// rest is left for a collision suffix and the part file's name).
  public static let maxNameLength = 200
}

/// How ``Downloads`` works: limits, checkpoints, retries and leases. Plain values with
/// defaults; the transfer limits that downloads share with fetches (connect timeout,
/// low-speed window, header size) come from the ``FetchSettings`` beside them.
///
///     var settings = DownloadSettings()
///     settings.maxSize = 4 << 30          // refuse bodies past 4 GiB when no size is expected
public struct DownloadSettings: Sendable, Hashable {

  /// See ``DownloadDefaults/maxSize``.
  public var maxSize = DownloadDefaults.maxSize
  /// See ``DownloadDefaults/sizeSlack``.
  public var sizeSlack = DownloadDefaults.sizeSlack
  /// See ``DownloadDefaults/checkpointInterval``.
  public var checkpointInterval = DownloadDefaults.checkpointInterval
  /// See ``DownloadDefaults/progressInterval``.
  public var progressInterval = DownloadDefaults.progressInterval
  /// See ``DownloadDefaults/maxAttempts``.
  public var maxAttempts = DownloadDefaults.maxAttempts
  /// See ``DownloadDefaults/retries``.
  public var retries = DownloadDefaults.retries
  /// See ``DownloadDefaults/retryDelay``.
  public var retryDelay = DownloadDefaults.retryDelay
  /// See ``DownloadDefaults/lease``.
  public var lease = DownloadDefaults.lease
  /// See ``DownloadDefaults/smallSize``.
  public var smallSize = DownloadDefaults.smallSize
  /// See ``DownloadDefaults/concurrency``.
  public var concurrency = DownloadDefaults.concurrency
  /// See ``DownloadDefaults/transferTimeout``.
  public var transferTimeout = DownloadDefaults.transferTimeout
  /// When true, every finished file's SHA-256 is computed and kept (a second read
  /// of the file); by default it is computed only to verify an expected one.
  public var alwaysHash = false

  /// Creates the default settings.
  public init() {}

  /// The limits of a transfer that starts at `offset` of a file expected to be
  /// `expectedSize` bytes (nil: unknown), with `fetch`'s connect timeout, low-speed
  /// window and header limit.
  func limits(offset: Int, expectedSize: Int?, fetch: FetchSettings) -> TransferLimits {
    let body = expectedSize.map { max(0, $0 - offset) + sizeSlack } ?? max(0, maxSize - offset)
    return TransferLimits(
      timeout: transferTimeout, connectTimeout: fetch.connectTimeout, lowSpeedLimit: fetch.lowSpeedLimit,
      lowSpeedTime: fetch.lowSpeedTime, maxBodySize: body, maxHeaderSize: fetch.maxHeaderSize)
  }
}
