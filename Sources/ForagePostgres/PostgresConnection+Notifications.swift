#if Postgres
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLibPQ
import ForageStore

extension PostgresConnection {
  /// How a wait for a notification ended.
  enum NotificationWait {
    /// At least one notification arrived (all that arrived were consumed).
    case notified
    /// `interrupt` became readable (its bytes were drained).
    case interrupted
    /// `timeout` passed with neither.
    case timedOut
  }

  /// Waits for a notification on a channel this connection `LISTEN`s on,
  /// blocking the calling thread: libpq's socket (`PQsocket`) and
  /// `interrupt` (the read end of a pipe another thread writes to, to end the
  /// wait early) are polled for up to `timeout`; what arrives is read with
  /// `PQconsumeInput` and taken with `PQnotifies`.
  ///
  /// - Throws: `StoreError` of kind `.connection` when the connection is lost.
  /// - SeeAlso: <https://www.postgresql.org/docs/15/libpq-notify.html>
  func waitForNotification(timeout: Duration, interrupt: Int32) throws -> NotificationWait {
    guard let conn = handle, PQstatus(conn) == CONNECTION_OK else { throw lostListener("PQstatus") }
    if takeNotifications(conn) { return .notified }
    let socket = PQsocket(conn)
    guard socket >= 0 else { throw lostListener("PQsocket") }
    var fds = [
      pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
      pollfd(fd: interrupt, events: Int16(POLLIN), revents: 0),
    ]
    let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
    let ready = poll(&fds, nfds_t(fds.count), milliseconds)
    if ready < 0 { return errno == EINTR ? .timedOut : .interrupted }
    if fds[0].revents != 0 {
      guard PQconsumeInput(conn) == 1 else { throw lostListener("PQconsumeInput") }
      if takeNotifications(conn) { return .notified }
    }
    if fds[1].revents != 0 {
      var bytes = [UInt8](repeating: 0, count: 64)
      while read(interrupt, &bytes, bytes.count) > 0 {}
      return .interrupted
    }
    return .timedOut
  }

  /// Frees every notification libpq holds; true when there was one.
  private func takeNotifications(_ conn: OpaquePointer) -> Bool {
    var any = false
    while let notification = PQnotifies(conn) {
      PQfreemem(notification)
      any = true
    }
    return any
  }

  private func lostListener(_ function: String) -> StoreError {
    StoreError.server(
      .connection, store: url.redacted, reason: "the connection a change stream listens on was lost",
      function: function, detail: handle.map { String(cString: PQerrorMessage($0)) }, sql: nil)
  }
}
#endif
