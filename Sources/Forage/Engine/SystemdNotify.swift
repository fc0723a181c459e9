import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells systemd how a `Type=notify` service is doing, without libsystemd:
/// one datagram per message to the socket `$NOTIFY_SOCKET` names (a path,
/// or an abstract name written `@name`). Without `NOTIFY_SOCKET` every call
/// does nothing.
///
///     let notify = SystemdNotifier()
///     notify.send("READY=1")                       // the schedule is loaded
///     notify.send("STATUS=next launch: t.refresh in 4m")
///     if let every = notify.watchdogInterval { … send("WATCHDOG=1") at half of it … }
///     notify.send("STOPPING=1")                    // on SIGTERM
///
/// - SeeAlso: <https://www.freedesktop.org/software/systemd/man/latest/sd_notify.html>
public struct SystemdNotifier: Sendable {
  /// The socket's address: a path, or `@name` for an abstract one; nil when
  /// systemd asked for no notifications.
  public let socket: String?
  /// The service's watchdog interval (`WATCHDOG_USEC`, when `WATCHDOG_PID`
  /// is unset or names this process): `WATCHDOG=1` must come more often.
  public let watchdogInterval: Duration?

  /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    let path = environment["NOTIFY_SOCKET"] ?? ""
    socket = path.isEmpty || !(path.hasPrefix("/") || path.hasPrefix("@")) ? nil : path
    let forUs = environment["WATCHDOG_PID"].map { Int32($0) == getpid() } ?? true
    if forUs, let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
      watchdogInterval = .microseconds(usec)
    } else {
      watchdogInterval = nil
    }
  }

  /// True when messages go somewhere (`NOTIFY_SOCKET` is set).
  public var isEnabled: Bool { socket != nil }

  /// Sends `message` (`READY=1`, `STATUS=…`; several may be joined with
  /// newlines) as one datagram. Returns false when it could not be sent (or
  /// there is no socket); a service manager that is gone is no reason to stop.
  @discardableResult
  public func send(_ message: String) -> Bool {
    guard let socket else { return false }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    var name = Array(socket.utf8)
    let abstract = name.first == UInt8(ascii: "@")
    if abstract { name[0] = 0 }  // an abstract name starts with a NUL byte
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    guard name.count < capacity else { return false }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (i, byte) in name.enumerated() { raw[i] = byte }
    }
    // A path ends with its NUL byte; an abstract name is exactly its bytes.
    let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + name.count + (abstract ? 0 : 1)
    #if os(Linux)
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    let flags = Int32(MSG_NOSIGNAL)
    #else
    let fd = Darwin.socket(AF_UNIX, SOCK_DGRAM, 0)
    let flags: Int32 = 0
    #endif
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let bytes = Array(message.utf8)
    let sent = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
        bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, flags, sa, socklen_t(length)) }
      }
    }
    return sent == bytes.count
  }
}
