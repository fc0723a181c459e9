import Foundation

/// Where a ``SystemScheduler`` keeps its pending requests, so a restarted
/// daemon keeps its schedule. Forage's engine adapts its store to this; a
/// JSON file and memory are built in.
///
///     let store = JSONFilePendingRequestStore(url: URL(fileURLWithPath: "pending.json"))
///     let scheduler = SystemScheduler(persistence: store)
public protocol PendingRequestPersistence: Sendable {
  /// The saved requests (empty when nothing was saved yet).
  ///
  /// - Throws: when the saved state exists but cannot be read.
  func loadPendingRequests() throws -> [AnyTaskRequest]
  /// Replaces the saved requests.
  ///
  /// - Throws: when the requests cannot be written.
  func savePendingRequests(_ requests: [AnyTaskRequest]) throws
}

/// Pending requests in a JSON file, written atomically (a temporary file
/// renamed over the old one).
public struct JSONFilePendingRequestStore: PendingRequestPersistence {
  /// The JSON file.
  public let url: URL
  /// A store in the file at `url` (created on first save).
  public init(url: URL) { self.url = url }

  public func loadPendingRequests() throws -> [AnyTaskRequest] {
    guard FileManager.default.fileExists(atPath: url.path) else { return [] }
    let data = try Data(contentsOf: url)
    return try JSONDecoder().decode([AnyTaskRequest].self, from: data)
  }

  public func savePendingRequests(_ requests: [AnyTaskRequest]) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(requests).write(to: url, options: .atomic)
  }
}

/// Pending requests kept in memory (lost when the process ends).
public final class InMemoryPendingRequestStore: PendingRequestPersistence, @unchecked Sendable {
  // @unchecked Sendable: `saved` is guarded by `lock`.
  private let lock = NSLock()
  private var saved: [AnyTaskRequest] = []
  /// A store holding `requests`.
  public init(_ requests: [AnyTaskRequest] = []) { saved = requests }
  public func loadPendingRequests() throws -> [AnyTaskRequest] { lock.withLock { saved } }
  public func savePendingRequests(_ requests: [AnyTaskRequest]) throws { lock.withLock { saved = requests } }
}
