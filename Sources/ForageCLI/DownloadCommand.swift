import Foundation
import Forage
import ForageHTTP
import ForageStore
import ForageSupport
import ForageURL

/// `forage download`: downloads files into a folder, resumably and verified, and
/// waits until they are in place; `--list` shows what the store keeps.
struct DownloadCommand: Command {
  static let name = "download"
  static let abstract = "Download files into a folder: resumable, verified, landing once."
  static let arguments: [Argument] = [
    .variadicPositional("URL", "The http or https URLs of the files to download."),
    .option("--to", "DIR", "The folder the files land in (it must exist; needed unless --list)."),
    .flag("--list", "List the downloads the store keeps (all states) instead."),
    .option(
      "--sha256", "HEX",
      "The file's expected SHA-256 (one URL only): a file that differs is tried again, then refused, never put "
        + "in place."),
    .option("--store", "PATH", "The store that keeps the downloads' state: a SQLite file or a postgres:// URL.", default: "forage.sqlite"),
    .flag("--again", "Download files that are already done once more (the new file lands beside the old one)."),
  ]
  static let exclusive = [["--to", "--list"]]
  static let discussion = """
    Each file goes to NAME.forage-ID.part in the folder, fsynced before the
    store records its bytes, then is checked (the server's size, --sha256)
    and renamed into place under the name the server suggests
    (Content-Disposition) or the URL's, made safe; a name already taken gets
    -1, -2... and nothing in the folder is ever replaced. A name SQLite would
    take for a database's side file (NAME-journal, -wal, -shm) gets
    .download appended, and the store itself is never a download's name; the
    listing says so. A failed download leaves no part file unless it holds
    bytes the next run resumes from. Waits until every
    file is in place or has failed, with a progress line. Run it again after
    an interruption (Ctrl-C, a killed process, a lost network): it resumes
    with Range and If-Range. A file already downloaded is not downloaded
    again (--again to do so). Prints each file's path.
    """
  static let notes = """
    Exit status: 0 every file in place, 1 a download failed (the error says
    why; a full disk keeps the part file for the next run), 2 bad input,
    130/143 stopped by SIGINT/SIGTERM (the next run resumes).
    """

  var urls: [String]
  var folder: String?
  var list = false
  var sha256: String?
  var store = EngineDefaults.storePath
  var again = false

  init(_ args: inout ArgumentList) throws(UsageError) {
    urls = args.variadicPositional("URL")
    folder = try args.option("--to")
    list = args.flag("--list")
    let hash = try args.option("--sha256")
    store = try args.option("--store") ?? store
    again = args.flag("--again")
    try args.expectNoMore()
    if list {
      guard urls.isEmpty, hash == nil, !again else {
        throw UsageError("--list takes no URL, --sha256 or --again: it lists what the store keeps")
      }
      return
    }
    guard !urls.isEmpty else { throw UsageError("missing URL: name at least one file to download") }
    guard folder != nil else { throw UsageError("missing --to DIR: the folder the files land in") }
    for url in urls {
      guard let parsed = WebURL(url), parsed.isHTTP, parsed.host != nil else {
        throw UsageError("\"\(url)\" is not an absolute http or https URL")
      }
    }
    if let hash {
      guard urls.count == 1 else { throw UsageError("--sha256 checks one file: give exactly one URL with it") }
      do { sha256 = try Downloads.checksum(hash) } catch { throw UsageError("--sha256: \(error)") }
    }
  }

  func run(_ out: Terminal) async -> ExitStatus {
    if list { return await listDownloads(out) }
    guard let folder, isDirectory(folder) else {
      out.error("forage download: the folder \(folder ?? "") does not exist (or is not a folder); create it first")
      return .badInput
    }
    let opened: any Store
    do { opened = try Engine.openStore(store) } catch {
      out.error("forage download", error)
      return .badInput
    }
    let downloads = Downloads(store: opened, transport: Engine.defaultTransport())
    var ids: [Int64] = []
    var resumedFrom: [Int64: Int] = [:]
    for url in urls {
      do {
        let entry = try await downloads.enqueue(url, to: folder, sha256: sha256, repeat: again ? .again : .retryFailed)
        if entry.state == .done {
          out.note("\(url): already downloaded (--again to download it once more)")
        } else if entry.bytesWritten > 0 {
          out.note("\(url): resuming at \(Units.formatBytes(entry.bytesWritten))")
        }
        ids.append(entry.id)
        resumedFrom[entry.id] = entry.state == .done ? 0 : entry.bytesWritten
      } catch {
        out.error("forage download", error)
        try? await opened.close()
        return .badInput
      }
    }

    let line = DownloadProgressLine(out, resumedFrom: resumedFrom)
    let work = Task { try await downloads.complete(ids, progress: { line.update($0) }) }
    // The first signal stops the transfers (their bytes are kept, fsynced and
    // recorded); a second one quits at once.
    let (signals, received) = SignalWatcher.stopping(
      "forage download", "stopping; the next run resumes (again to quit now)", out
    ) { work.cancel() }
    defer { signals.cancel() }
    let ended: [(entry: DownloadEntry, result: DownloadResult?)]
    do { ended = try await work.value } catch {
      out.error("forage download", error)
      try? await opened.close()
      return .jobFailed
    }
    out.clearProgress()
    var allDone = true
    for (entry, result) in ended {
      switch (entry.state, result) {
      case (.done, _):
        out.print(entry.path ?? entry.folder)
        if let note = Self.renaming(entry) { out.note("forage download: \(entry.url): \(note)") }
      case (_, .failed(let error)?):
        allDone = false
        out.error("forage download: \(error)")
      case (.failed, _):
        allDone = false
        out.error("forage download: \(entry.url): \(entry.lastError ?? "failed")")
      case (_, .interrupted(let reason)?):
        allDone = false
        out.note("forage download: \(entry.url): stopped (\(reason)); \(Units.formatBytes(entry.bytesWritten)) kept, run again to resume")
      case (_, .retryLater(let reason)?):
        allDone = false
        out.error("forage download: \(entry.url): \(reason); \(Units.formatBytes(entry.bytesWritten)) kept, run again to resume")
      default:
        allDone = false
        out.error("forage download: \(entry.url): not finished (\(entry.state.rawValue))")
      }
    }
    do { try await opened.close() } catch { out.error("forage download", error) }
    if let signal = received.signal { return .signal(signal) }
    return allDone ? .ok : .jobFailed
  }

  /// `--list`: one line per download, oldest first.
  private func listDownloads(_ out: Terminal) async -> ExitStatus {
    guard let opened = openExistingStore(store, for: "forage download", out) else { return .badInput }
    do {
      let entries = try await opened.downloads(state: nil, limit: .max)
      try? await opened.close()
      if entries.isEmpty {
        out.note("no downloads in \(store)")
        return .ok
      }
      for e in entries {
        let size: String
        switch (e.state, e.knownSize) {
        case (.done, _): size = Units.formatBytes(e.bytesWritten)
        case (_, let total?): size = "\(Units.formatBytes(e.bytesWritten)) of \(Units.formatBytes(total))"
        case (_, nil): size = Units.formatBytes(e.bytesWritten)
        }
        var text = "\(e.id)  \(e.state.rawValue.padding(7)) \(size.padding(22)) \(e.path ?? e.name.map { e.folder + "/" + $0 } ?? e.folder)  \(e.url)"
        if let sha = e.sha256 { text += "  sha256:\(sha)" }
        if let note = Self.renaming(e) { text += "  (\(note))" }
        if e.state != .done, let error = e.lastError { text += "  (\(error))" }
        out.print(text)
      }
      return .ok
    } catch {
      try? await opened.close()
      out.error("forage download", error)
      return .jobFailed
    }
  }

  /// Why a download landed under another name than the server's, when a
  /// rule renamed it (a name SQLite would take for a side file).
  static func renaming(_ entry: DownloadEntry) -> String? {
    guard let name = entry.name, let path = entry.path, !path.hasSuffix("/" + name) else { return nil }
    return DownloadName.renaming(name, landedAs: (path as NSString).lastPathComponent)
  }

  private func isDirectory(_ path: String) -> Bool {
    var isDir: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDir) && isDir.boolValue
  }
}

/// The live line of running downloads: bytes so far (of the total when known), the
/// rate since the line started, and the time left; at most ten redraws a second.
final class DownloadProgressLine: Sendable {
  private struct State {
    var statuses: [Int64: DownloadStatus] = [:]
    /// Bytes each download had before this run: what it resumed from.
    var startBytes: [Int64: Int] = [:]
    var lastDrawn = ContinuousClock.now - .seconds(1)
  }

  private let state = Locked(State())
  private let out: Terminal
  private let started = ContinuousClock.now

  /// - Parameter resumedFrom: the bytes each download had before this run (the rate
  ///   counts only what this run fetched).
  init(_ out: Terminal, resumedFrom: [Int64: Int] = [:]) {
    self.out = out
    state.withLock { $0.startBytes = resumedFrom }
  }

  func update(_ status: DownloadStatus) {
    guard out.drawsProgress else { return }
    state.withLock { s in
      s.statuses[status.id] = status
      if s.startBytes[status.id] == nil { s.startBytes[status.id] = status.bytes }
      let now = ContinuousClock.now
      guard now - s.lastDrawn >= .milliseconds(100) else { return }
      s.lastDrawn = now
      out.progress(Self.line(s.statuses, startBytes: s.startBytes, elapsed: now - started))
    }
  }

  private static func line(_ statuses: [Int64: DownloadStatus], startBytes: [Int64: Int], elapsed: Duration) -> String {
    let all = statuses.values.sorted { $0.id < $1.id }
    let bytes = all.reduce(0) { $0 + $1.bytes }
    let fresh = all.reduce(0) { $0 + max(0, $1.bytes - (startBytes[$1.id] ?? 0)) }
    let totals = all.compactMap(\.total)
    let total = totals.count == all.count ? totals.reduce(0, +) : nil
    let label = all.count == 1 ? (all[0].name ?? all[0].url) : "\(all.count) files"
    var text = "\(label): \(Units.formatBytes(bytes))"
    if let total { text += " of \(Units.formatBytes(total))" }
    let rate = Double(fresh) / max(elapsed.seconds, 0.001)
    text += " · \(Units.formatBytes(Int(rate)))/s"
    if let total, rate > 0 {
      let left = Double(max(0, total - bytes)) / rate
      text += " · \(Int(left.rounded(.up)))s left"
    }
    return text
  }
}
