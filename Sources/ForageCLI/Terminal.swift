#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes: standard output for results, standard error for
/// messages and the progress line (shown on a terminal only).
struct Terminal: Sendable {
  var isTTY: Bool { isatty(2) != 0 }

  func print(_ text: String) {
    write(1, text + "\n")
  }

  func write(_ fd: Int32, _ text: String) {
    var copy = text
    copy.withUTF8 { buffer in
      var offset = 0
      while offset < buffer.count {
        let n = Glibc_write(fd, buffer.baseAddress! + offset, buffer.count - offset)
        if n <= 0 { break }
        offset += n
      }
    }
  }

  func error(_ text: String) {
    clearProgress()
    write(2, text + "\n")
  }

  /// Rewrites the progress line in place (standard error, terminals only).
  func progress(_ text: String) {
    guard isTTY else { return }
    write(2, "\r\u{1B}[K" + String(text.prefix(120)))
  }

  func clearProgress() {
    if isTTY { write(2, "\r\u{1B}[K") }
  }
}

private func Glibc_write(_ fd: Int32, _ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
  #if canImport(Glibc)
  return Glibc.write(fd, p, n)
  #else
  return Darwin.write(fd, p, n)
  #endif
}

/// Exit statuses of the `forage` command.
enum ExitStatus: Int32 {
  /// Success (a run stopped by its budget is a success: the next continues).
  case ok = 0
  /// A job failed (store error, or every page failed).
  case jobFailed = 1
  /// Bad input: config or arguments. Nothing was written.
  case badInput = 2
}
