#if Postgres
import Foundation
import ForageSupport

/// Every round trip of the store's connections, one line each, in the file
/// that the environment variable `FORAGE_POSTGRES_TRACE` names (appended, `%p`
/// replaced by the process id; nothing is written when it is unset): the milliseconds since the process
/// opened its first connection, the round trip's milliseconds, the
/// connection (`store` or `side`), the number of statements sent, and the
/// first statement's opening words. For finding which round trips a page
/// waits for (the fleet benchmark's analysis reads it); never the values.
///
///     FORAGE_POSTGRES_TRACE=/tmp/trace forage run --store postgres://…
///     #   12.417 2.513 side 2 BEGIN WITH queued AS (SELECT id, depth FROM frontier
enum PostgresTrace {
  /// The open trace file, or nil when tracing is off.
  static let sink: Sink? = ProcessInfo.processInfo.environment["FORAGE_POSTGRES_TRACE"].flatMap(Sink.init)

  /// The trace file and the instant the trace counts from.
  final class Sink: Sendable {
    private let file: Locked<UnsafeMutablePointer<FILE>>
    private let start = ContinuousClock.now

    /// Milliseconds with three decimals: `12.417`.
    private static func format(_ duration: Duration) -> String {
      let (seconds, attoseconds) = duration.components
      // A round trip that began before the sink opened counts from it.
      let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
      let fraction = String(micros % 1000)
      return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    init?(path: String) {
      let path = path.replacingOccurrences(of: "%p", with: String(ProcessInfo.processInfo.processIdentifier))
      guard !path.isEmpty, let file = fopen(path, "a") else { return nil }
      self.file = Locked(file)
    }

    /// Writes one round trip that began at `began`, with `count` statements, the first `sql`.
    func record(connection: String, began: ContinuousClock.Instant, count: Int, sql: String) {
      let now = ContinuousClock.now
      let head = sql.split(whereSeparator: \.isWhitespace).prefix(10).joined(separator: " ")
      let line = "\(Self.format(began - start)) \(Self.format(now - began)) \(connection) \(count) \(head)\n"
      file.withLock {
        _ = fputs(line, $0)
        _ = fflush($0)
      }
    }
  }
}

#endif
