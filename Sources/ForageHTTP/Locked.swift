import Foundation

/// A value behind a lock, for state shared between the curl event-loop thread, URLSession
/// delegate queues and async callers.
///
/// `@unchecked Sendable` is safe: `value` is only reached through `withLock`, which holds
/// the lock for the whole access.
final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value.
  func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
