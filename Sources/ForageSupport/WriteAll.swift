#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes every byte of `bytes` to `fd`, retrying short writes and `EINTR`.
///
/// - Returns: 0 when everything was written, else the `errno` of the write
///   that failed.
/// - SeeAlso: <https://pubs.opengroup.org/onlinepubs/9799919799/functions/write.html>
package func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
  var offset = 0
  while offset < bytes.count {
    #if canImport(Glibc)
    let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
    #else
    let n = Darwin.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
    #endif
    if n < 0 {
      if errno == EINTR { continue }
      return errno
    }
    if n == 0 { return EIO }
    offset += n
  }
  return 0
}
