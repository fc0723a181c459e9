import Dispatch
import Foundation
import Forage
import ForageSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns SIGINT/SIGTERM into a callback (dispatch sources; the default
/// action is ignored while watching).
final class SignalWatcher: Sendable {
  // Dispatch sources are thread-safe; the array is written once in init.
  nonisolated(unsafe) private var sources: [DispatchSourceSignal] = []

  init(signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
    for s in signals {
      signal(s, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: s, queue: .global())
      source.setEventHandler { handler(s) }
      source.resume()
      sources.append(source)
    }
  }

  func cancel() {
    for s in sources { s.cancel() }
  }

  /// Watches SIGINT and SIGTERM for a command that stops the way its budget
  /// would: the first signal prints `command: SIGINT: message` and calls
  /// `stop`; a second one kills the process groups of the command channel's
  /// running programs (``ChildProcesses``: none outlives us) and quits at
  /// once with 128 + its number (committed work is safe; the next launch
  /// continues from the last commit, and an abandoned notification stays
  /// pending). `report` writes those lines (default: `out`'s standard
  /// error). Returns the watcher and the box holding the first signal, for
  /// the exit status.
  static func stopping(
    _ command: String, _ message: String, _ out: Terminal,
    report: (@Sendable (String) -> Void)? = nil, stop: @escaping @Sendable () -> Void
  ) -> (SignalWatcher, SignalBox) {
    let received = SignalBox()
    let say: @Sendable (String) -> Void = report ?? { out.error($0) }
    let watcher = SignalWatcher(signals: [SIGINT, SIGTERM]) { signal in
      if received.first(signal) {
        say("\(command): \(signalName(signal)): \(message)")
        stop()
      } else {
        say("\(command): \(signalName(signal)) again: quitting now; the next launch continues from the last commit")
        ChildProcesses.killAll()
        exit(128 + signal)
      }
    }
    return (watcher, received)
  }
}

/// The first signal received, for the exit status.
final class SignalBox: Sendable {
  private let received = Locked<Int32?>(nil)

  /// Records `signal`; true when it is the first one.
  func first(_ signal: Int32) -> Bool {
    received.withLock { received in
      guard received == nil else { return false }
      received = signal
      return true
    }
  }

  /// The first signal received, if any.
  var signal: Int32? { received.withLock { $0 } }
}

/// `SIGINT`, `SIGTERM`, or the number.
func signalName(_ signal: Int32) -> String {
  switch signal {
  case SIGINT: "SIGINT"
  case SIGTERM: "SIGTERM"
  case SIGHUP: "SIGHUP"
  default: "signal \(signal)"
  }
}
