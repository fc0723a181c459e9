import ForageSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a command writes: standard output for results, standard error for
/// messages and the progress line (shown on a terminal only).
struct Terminal: Sendable {
  /// With `--verbose`: errors also print their internal detail (the error's
  /// type, a C function and code), for bug reports.
  var verbose = false
  /// With `--quiet`: no notes and no progress line; results and errors only.
  var quiet = false
  /// False with `--no-progress`.
  var showsProgress = true

  var isTTY: Bool { isatty(2) != 0 }

  /// Whether the live progress line is drawn: on a terminal, without
  /// `--quiet`, `--no-progress` or `NO_COLOR` (it is made of escape codes).
  var drawsProgress: Bool {
    guard isTTY, showsProgress, !quiet else { return false }
    if let no = ProcessInfo.processInfo.environment["NO_COLOR"], !no.isEmpty { return false }
    return true
  }

  /// Takes the global flags of a command line.
  mutating func read(_ args: inout ArgumentList) {
    if args.flag(GlobalArguments.verbose.name) { verbose = true }
    if args.flag(GlobalArguments.quiet.name) { quiet = true }
    if args.flag(GlobalArguments.noProgress.name) { showsProgress = false }
  }

  /// A message about what happened (standard error), unless `--quiet`.
  func note(_ text: String) {
    guard !quiet else { return }
    error(text)
  }

  func print(_ text: String) {
    write(1, text + "\n")
  }

  func write(_ fd: Int32, _ text: String) {
    var copy = text
    // A closed pipe or a full disk loses the output; nothing to report it to.
    copy.withUTF8 { _ = writeAll(fd, $0) }
  }

  func error(_ text: String) {
    clearProgress()
    write(2, text + "\n")
  }

  /// Prints `error` for a person, after `context` (`forage run`): its
  /// description, and with `--verbose` its detail.
  func error(_ context: String, _ error: any Error) {
    var text = context.isEmpty ? "\(error)" : "\(context): \(error)"
    if verbose { text += "\n  detail: " + String(reflecting: error) }
    self.error(text)
  }

  /// Rewrites the progress line in place (standard error, terminals only).
  func progress(_ text: String) {
    guard drawsProgress else { return }
    write(2, "\r\u{1B}[K" + String(text.prefix(120)))
  }

  func clearProgress() {
    if drawsProgress { write(2, "\r\u{1B}[K") }
  }
}

/// Exit statuses of the `forage` command.
enum ExitStatus: Equatable {
  /// Success (a run stopped by its budget is a success: the next continues).
  case ok
  /// A job failed (store error, or every page failed).
  case jobFailed
  /// Bad input: config or arguments. Nothing was written.
  case badInput
  /// Stopped by a signal after saving its work: 128 + the signal's number, as
  /// shells report it (130 for SIGINT, 143 for SIGTERM).
  case signal(Int32)

  var rawValue: Int32 {
    switch self {
    case .ok: 0
    case .jobFailed: 1
    case .badInput: 2
    case .signal(let number): 128 + number
    }
  }
}
