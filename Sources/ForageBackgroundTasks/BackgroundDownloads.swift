#if os(Linux)
import AppleFrameworksStandIn
#endif

#if os(iOS) || os(visionOS) || os(macOS) || os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Forage
import ForageHTTP
import ForageStore
import ForageSupport

/// Forage's queued downloads, fetched by a background `URLSession`: iOS
/// transfers them while the app is suspended or not running, relaunches the
/// app when they finish, and the files land in their folders exactly as the
/// downloads Forage fetches itself (verified, put under a free name, never
/// replacing a file; see `Downloads`).
///
///     // At launch (and again when iOS relaunches the app for the session):
///     let downloads = BackgroundDownloads(identifier: "com.example.downloads", store: engine.store)
///     downloads.activate()
///     // In the app delegate:
///     func application(_ application: UIApplication, handleEventsForBackgroundURLSession identifier: String,
///                      completionHandler: @escaping () -> Void) {
///       downloads.handleEvents(forBackgroundURLSession: identifier, completionHandler: completionHandler)
///     }
///     // Whenever downloads are queued:
///     try await downloads.start()
///
/// iOS's completion handler is kept and called on the main queue once the
/// session has delivered every event (`urlSessionDidFinishEvents`) and every
/// finished file has been put in place, never before: after it the app may
/// be suspended at once.
///
/// On Apple platforms the session is `URLSessionConfiguration.background(withIdentifier:)`
/// with `sessionSendsLaunchEvents`; on Linux (the stand-in build) it is an
/// ordinary session, and tests deliver the background events themselves.
public final class BackgroundDownloads: NSObject, URLSessionDownloadDelegate, Sendable {
  /// The background session's identifier.
  public let identifier: String
  /// Whether iOS may wait for good conditions (Wi-Fi, power) to transfer.
  public let isDiscretionary: Bool
  private let downloads: Downloads
  /// The completion handler kept and its session's work (internal: tests read it).
  let events = BackgroundSessionEvents()
  private let session = Locked<URLSession?>(nil)
  /// Tasks whose file was taken in, so their completion is not counted as a failure.
  private let finished = Locked(Set<Int>())

  /// Downloads of `store`'s queue through the background session `identifier`.
  public init(
    identifier: String, store: any Store, settings: DownloadSettings = DownloadSettings(), isDiscretionary: Bool = false
  ) {
    self.identifier = identifier
    self.isDiscretionary = isDiscretionary
    self.downloads = Downloads(store: store, transport: Engine.defaultTransport(), settings: settings)
    super.init()
  }

  /// The session, created on first use with this object as its delegate.
  /// Call it at launch: after a relaunch, iOS delivers the session's events
  /// only once a session with its identifier exists again.
  @discardableResult
  public func activate() -> URLSession {
    session.withLock { s in
      if let s { return s }
      let created = URLSession(
        configuration: Self.configuration(identifier, isDiscretionary), delegate: self, delegateQueue: nil)
      s = created
      return created
    }
  }

  /// Keeps iOS's completion handler for the session's events
  /// (`application(_:handleEventsForBackgroundURLSession:completionHandler:)`)
  /// and makes sure the session exists. Returns false, calling nothing, for
  /// another session's identifier.
  @discardableResult
  public func handleEvents(forBackgroundURLSession identifier: String, completionHandler: @escaping () -> Void) -> Bool {
    guard identifier == self.identifier else { return false }
    let handler = MainQueueHandler(completionHandler)
    events.keep({ handler.callOnMainQueue() }, forSession: identifier)
    activate()
    return true
  }

  /// Hands up to `limit` queued downloads to the session.
  ///
  /// - Returns: how many were handed over.
  /// - Throws: store errors.
  @discardableResult
  public func start(limit: Int = 8) async throws -> Int {
    let handed = try await downloads.handOver(limit: limit, session: identifier)
    let session = activate()
    for download in handed {
      let task = session.downloadTask(with: download.url)
      task.taskDescription = download.taskDescription
      task.resume()
    }
    return handed.count
  }

  // MARK: URLSessionDownloadDelegate

  public func urlSession(
    _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
  ) {
    guard let handed = HandedOverDownload(taskDescription: downloadTask.taskDescription) else { return }
    finished.withLock { _ = $0.insert(downloadTask.taskIdentifier) }
    let http = downloadTask.response as? HTTPURLResponse
    let status = http?.statusCode ?? 0
    var headers = HTTPHeaders()
    for (name, value) in http?.allHeaderFields ?? [:] { headers.add("\(name)", "\(value)") }
    let finalURL = downloadTask.response?.url
    let answer = headers
    let downloads = self.downloads
    // The file goes away when this method returns: staged now, taken in after.
    do {
      try handed.stage(location)
    } catch {
      events.track(forSession: identifier) { _ = await downloads.handOverFailed(handed, message: error.message) }
      return
    }
    events.track(forSession: identifier) {
      _ = await downloads.finishHandedOver(handed, status: status, headers: answer, finalURL: finalURL)
    }
  }

  public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    guard let handed = HandedOverDownload(taskDescription: task.taskDescription) else { return }
    let tookIn = finished.withLock { $0.remove(task.taskIdentifier) != nil }
    guard !tookIn else { return }
    let message = error.map { "the transfer of \(handed.url.absoluteString) failed: \($0.localizedDescription)" }
      ?? "the transfer of \(handed.url.absoluteString) ended without a file"
    let downloads = self.downloads
    events.track(forSession: identifier) { _ = await downloads.handOverFailed(handed, message: message) }
  }

  public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
    let events = self.events, identifier = self.identifier
    Task { await events.finishedEvents(forSession: identifier) }
  }

  // MARK: Configuration

  /// Apple's background configuration, or the stand-in's on Linux.
  static func configuration(_ identifier: String, _ discretionary: Bool) -> URLSessionConfiguration {
    #if !os(Linux)
    let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
    configuration.sessionSendsLaunchEvents = true
    configuration.isDiscretionary = discretionary
    return configuration
    #else
    return StandInBackgroundSession.configuration(identifier: identifier)
    #endif
  }
}

/// iOS's completion handler, called on the main queue as Apple asks.
///
/// `@unchecked Sendable`: the handler is Apple's non-Sendable closure; it is
/// called once, on the main queue, and never touched elsewhere.
private struct MainQueueHandler: @unchecked Sendable {
  let handler: () -> Void
  init(_ handler: @escaping () -> Void) { self.handler = handler }
  func callOnMainQueue() {
    DispatchQueue.main.async { self.handler() }
  }
}
#endif
