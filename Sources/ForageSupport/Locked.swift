import Foundation

/// A value behind a lock, for state that several threads or tasks share.
///
///     let hits = Locked(0)
///     hits.withLock { $0 += 1 }
///     let seen = hits.withLock { $0 }
///
/// The one lock type of the package: the curl event loop, URLSession delegate
/// queues, the schedulers, the test server and the engine all use it.
/// `Synchronization.Mutex` would do the same without a class, but it needs
/// macOS 15 / iOS 18 and the package supports macOS 14 / iOS 17.
///
/// Do the least under the lock: take a decision inside `withLock`, act on it
/// (resume a continuation, call a handler, write output) after it returns.
package final class Locked<Value>: @unchecked Sendable {
  // @unchecked Sendable: `value` is private and only reached inside
  // `withLock`, which holds `lock` for the whole access, so no two threads
  // touch it at once. (As with any lock, a reference type taken out of the
  // value is the caller's to protect.)
  @usableFromInline let lock = NSLock()
  @usableFromInline var value: Value

  /// A lock guarding `value`.
  @inlinable package init(_ value: Value) { self.value = value }

  /// Runs `body` with exclusive access to the value and returns its result.
  @inlinable package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
