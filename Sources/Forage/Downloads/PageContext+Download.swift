import Foundation
import ForageHTTP
import ForageStore
import ForageSupport
import ForageURL

extension PageContext {
  /// Fetches a start URL of a `download` source as a background download (a
  /// large JSON, HTML or feed file): its bytes go to a part file and resume
  /// in the next launch when this one ends first (the entry stays queued on
  /// the frontier, so the crawl is not complete), and once the file is whole
  /// and verified it is read, extracted like a fetched page, and removed
  /// from the cache folder. Each crawl downloads the file again.
  func processDownload(_ item: FrontierItem, url: WebURL, now: Date) async -> ProcessedPage {
    guard let downloads else {
      return ProcessedPage(commit: commit(item, .deferred), kind: .deferred)
    }
    /// A failure that may pass: retried later, the source's records still stand.
    func transient(_ why: String) -> ProcessedPage {
      ProcessedPage(
        commit: commit(item, .failed(permanent: false, maxAttempts: EngineDefaults.maxAttempts), keepsRecords: true),
        kind: .failed, warnings: ["\(url.href): \(why)"])
    }
    do {
      var entry = try await downloads.enqueue(url.href, to: try cacheFolder(), source: source.source.name, repeat: .keep)
      switch entry.state {
      case .done:
        // The last crawl's file was read and removed: this crawl downloads it again.
        entry = try await downloads.enqueue(url.href, to: entry.folder, source: source.source.name, repeat: .again)
      case .failed:
        entry = try await downloads.enqueue(url.href, to: entry.folder, source: source.source.name, repeat: .retryFailed)
      case .queued, .claimed:
        break
      }
      let results = try await downloads.work(ids: [entry.id], until: deadline - EngineDefaults.stopMargin)
      switch results[entry.id] {
      case .done?:
        guard let landed = try await downloads.store.download(id: entry.id), let path = landed.path else {
          return transient("the downloaded file is gone before it could be read")
        }
        // Read whole to extract from: a file past the limit stays where it is
        // and is not read (it would not fit the parser, or memory).
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        if size > EngineDefaults.maxReadSize {
          return ProcessedPage(
            commit: commit(item, .failed(permanent: true, maxAttempts: EngineDefaults.maxAttempts), keepsRecords: true),
            kind: .failed,
            warnings: [
              "\(url.href): the downloaded file (\(path)) is larger than "
                + "\(Units.formatBytes(EngineDefaults.maxReadSize)), the most Forage reads to extract from; it was kept"
            ])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
          return transient("the downloaded file is gone before it could be read")
        }
        // The file was this crawl's copy of the source: read, it goes.
        try? FileManager.default.removeItem(atPath: path)
        let response = Response(url: url, status: 200, headers: [:], body: Array(data))
        return processResponse(response, item: item, now: now)
      case .failed(let error)?:
        return transient("\(error)")
      case .retryLater(let why)?:
        return transient(why)
      case .interrupted?, .busy?, nil:
        // Its bytes are kept; the next launch resumes it.
        return ProcessedPage(commit: commit(item, .deferred), kind: .deferred)
      }
    } catch {
      return transient("\(error)")
    }
  }

  /// Where a download source's files land while they are read:
  /// `.forage-downloads/SOURCE` in the config file's folder (created when missing).
  func cacheFolder() throws -> String {
    let base = (downloadsDirectory ?? ".") as NSString
    let folder = base.appendingPathComponent(".forage-downloads/" + PageContext.safeFolderName(source.source.name))
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
  }

  /// A source name as one folder name: letters, digits, `-`, `_` and `.`
  /// kept, anything else `_` (no separators, no leading dot).
  static func safeFolderName(_ name: String) -> String {
    var out = String(name.unicodeScalars.map { s -> Character in
      let ok = (s.isASCII && (CharacterSet.alphanumerics.contains(s) || s == "-" || s == "_" || s == "."))
      return ok ? Character(s) : "_"
    })
    while out.hasPrefix(".") { out = "_" + out.dropFirst() }
    return out.isEmpty ? "_" : String(out.prefix(100))
  }
}
