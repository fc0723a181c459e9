#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// An error from ForageTestSupport: the server could not start, or a site could not be
/// written.
///
///     do { let server = try TestServer() } catch { print(error) }
///     // "test server: bind failed: Address already in use (errno 98)"
public struct TestServerError: Error, CustomStringConvertible, Sendable {
  enum Code: Sendable { case socket, thread, writeSite }

  let code: Code
  /// The C function or operation that failed, such as `bind`.
  public let call: String
  /// The `errno` value, or 0 when none applies.
  public let errno: Int32
  /// A path involved, when one is (`writeStaticSite`).
  public let path: String?

  init(_ code: Code, call: String, errno: Int32, path: String? = nil) {
    self.code = code
    self.call = call
    self.errno = errno
    self.path = path
  }

  /// True when the listening socket could not be set up (for example the port is taken).
  public var isSocketError: Bool { code == .socket }

  /// True when the port asked for is taken (another program listens on it).
  public var isAddressInUse: Bool { code == .socket && call == "bind" && errno == EADDRINUSE }

  public var description: String {
    var text = "test server: \(call) failed"
    if let path { text += " for \(path)" }
    if errno != 0 { text += ": \(String(cString: strerror(errno))) (errno \(errno))" }
    return text
  }
}
