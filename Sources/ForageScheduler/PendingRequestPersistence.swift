import ForageSupport
import Foundation

/// Where a ``SystemScheduler`` keeps its pending requests, so a restarted
/// daemon keeps its schedule. Forage's engine keeps them in its store
/// (`StorePendingRequests`); memory is built in.
///
///     let pending = InMemoryPendingRequestStore()
///     let scheduler = SystemScheduler(persistence: pending)
///
/// The scheduler reads the requests once, when it is created, and saves the
/// whole set after every change, synchronously: `submit(_:)` cannot wait, as
/// in Apple's API. An implementation over slow or asynchronous storage
/// returns at once and writes behind, in order (`StorePendingRequests` does);
/// it never blocks the calling thread waiting for asynchronous work.
public protocol PendingRequestPersistence: Sendable {
  /// The saved requests (empty when nothing was saved yet).
  ///
  /// - Throws: when the saved state exists but cannot be read.
  func loadPendingRequests() throws -> [AnyTaskRequest]
  /// Replaces the saved requests with `requests`, the whole pending set.
  ///
  /// - Throws: when the requests cannot be written.
  func savePendingRequests(_ requests: [AnyTaskRequest]) throws
}

/// Pending requests kept in memory (lost when the process ends).
public final class InMemoryPendingRequestStore: PendingRequestPersistence, Sendable {
  private let saved: Locked<[AnyTaskRequest]>
  /// A store holding `requests`.
  public init(_ requests: [AnyTaskRequest] = []) { saved = Locked(requests) }
  public func loadPendingRequests() throws -> [AnyTaskRequest] { saved.withLock { $0 } }
  public func savePendingRequests(_ requests: [AnyTaskRequest]) throws { saved.withLock { $0 = requests } }
}
