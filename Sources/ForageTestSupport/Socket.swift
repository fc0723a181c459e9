#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation

/// Thin wrappers over the POSIX socket calls the server uses; each retries `EINTR`.
enum Socket {
  #if os(Linux)
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let noSignal = Int32(MSG_NOSIGNAL)
  #else
    static let streamType = SOCK_STREAM
    static let noSignal: Int32 = 0
  #endif

  /// Opens a listening TCP socket on 127.0.0.1 and returns it with its port.
  static func openListener(port: UInt16, backlog: Int32 = 512) throws(TestServerError) -> (fd: Int32, port: UInt16) {
    let fd = socket(AF_INET, streamType, 0)
    guard fd >= 0 else { throw TestServerError(.socket, call: "socket", errno: errno) }
    var yes: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    #if canImport(Darwin)
      setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
    #endif
    var address = sockaddr_in()
    #if canImport(Darwin)
      address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
    #endif
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      let code = errno
      close(fd)
      throw TestServerError(.socket, call: "bind", errno: code)
    }
    guard listen(fd, backlog) == 0 else {
      let code = errno
      close(fd)
      throw TestServerError(.socket, call: "listen", errno: code)
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else {
      let code = errno
      close(fd)
      throw TestServerError(.socket, call: "getsockname", errno: code)
    }
    return (fd, UInt16(bigEndian: address.sin_port))
  }

  /// Accepts one connection; nil on failure.
  static func acceptConnection(_ fd: Int32) -> Int32? {
    while true {
      let client = accept(fd, nil, nil)
      if client >= 0 {
        var yes: Int32 = 1
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
          setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
        #endif
        // A client that stops reading must not hold a sending thread forever.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return client
      }
      if errno == EINTR || errno == ECONNABORTED { continue }
      return nil
    }
  }

  /// Sends every byte; false if the peer is gone or the send timed out.
  static func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let n = send(fd, bytes.baseAddress! + offset, bytes.count - offset, noSignal)
      if n > 0 {
        offset += n
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        return false
      }
    }
    return true
  }

  static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { sendAll(fd, $0) }
  }

  /// Reads into `buffer`; the byte count, 0 at end of stream, -1 on error.
  static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
    while true {
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n < 0 && errno == EINTR { continue }
      return n
    }
  }

  /// Makes the next `close` send a TCP reset instead of a FIN (`SO_LINGER` 0).
  static func setResetOnClose(_ fd: Int32) {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
  }

  /// Polls `fds` for input; returns the `revents` of each, or nil on timeout.
  static func pollInput(_ fds: [Int32], timeoutMilliseconds: Int32) -> [Int16]? {
    var entries = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    while true {
      let n = poll(&entries, nfds_t(entries.count), timeoutMilliseconds)
      if n < 0 && errno == EINTR { continue }
      if n <= 0 { return nil }
      return entries.map(\.revents)
    }
  }

  /// True when the peer closed its side or the connection failed (without consuming data).
  static func peerClosed(_ fd: Int32) -> Bool {
    var byte: UInt8 = 0
    let n = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
    if n == 0 { return true }
    if n < 0 { return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR }
    return false
  }
}
