#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Forage
import ForageStore
#if Postgres
import ForagePostgres
#endif

/// A test program (not installed): delivers a store's changes to a sink that
/// appends each change's id to a file, and kills itself with SIGKILL after a
/// chosen batch's `apply` returned, before its cursor is written. The
/// redelivery test (Tests/ForageCLITests/SinkDeliveryKillTests.swift) runs it.
///
///     forage-sink-probe STORE NAME OUTPUT BATCH-SIZE KILL-AFTER-BATCH   # 0: no kill
@main
struct SinkProbe {
  /// Appends the ids of the changes it is given to a file, one a line,
  /// synced before `apply` returns.
  struct FileSink: RecordSink {
    let path: String

    func apply(_ changes: [RecordChange]) async throws {
      let fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
      guard fd >= 0 else { throw ProbeError(message: "cannot open \(path)") }
      defer { close(fd) }
      let text = changes.map { "\($0.id)\n" }.joined()
      let written = text.utf8CString.withUnsafeBufferPointer { write(fd, $0.baseAddress, $0.count - 1) }
      guard written == text.utf8.count, fsync(fd) == 0 else { throw ProbeError(message: "cannot write \(path)") }
    }
  }

  struct ProbeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
  }

  static func main() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count == 5, let batch = Int(arguments[3]), let killAfter = Int(arguments[4]) else {
      FileHandle.standardError.write(Data("usage: forage-sink-probe STORE NAME OUTPUT BATCH-SIZE KILL-AFTER-BATCH\n".utf8))
      exit(2)
    }
    #if Postgres
    for scheme in ["postgres://", "postgresql://"] {
      Engine.registerStore(scheme: scheme) { url, _ in try PostgresStore(url: url) }
    }
    #endif
    do {
      let engine = Engine(config: ForageConfig(sources: []), store: try Engine.openStore(arguments[0]))
      let report = try await engine.deliver(
        to: FileSink(path: arguments[2]), as: arguments[1], source: nil, batchSize: batch, until: nil, stop: nil,
        afterApply: { number in if number == killAfter { kill(getpid(), SIGKILL) } })
      print(report)
      try await engine.close()
    } catch {
      FileHandle.standardError.write(Data("forage-sink-probe: \(error)\n".utf8))
      exit(1)
    }
  }
}
