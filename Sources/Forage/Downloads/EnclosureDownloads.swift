import Foundation
import ForageStore

/// A feed source's `"downloadEnclosures"`: its entries' enclosures (podcast episodes,
/// attached files) are queued as downloads into a folder.
///
///     "downloadEnclosures": {"to": "/srv/podcasts", "types": ["audio/*"]}
///
/// Each enclosure URL is queued once per folder (a later launch that sees it again
/// leaves it as it is, done or not); they are downloaded by processing launches, and
/// by refresh launches when small (see ``Downloads``). The feed's `length` attribute
/// is not used as an expected size: feeds often get it wrong.
public struct EnclosureDownloads: Sendable, Hashable {
  /// The folder the files land in. A relative path is taken from the config
  /// file's folder (like the store's and a file channel's); it is created when
  /// missing.
  public var folder: String
  /// MIME types to download: `audio/mpeg`, `audio/*`, `*/*`; empty takes every
  /// enclosure. An enclosure without a type matches only an empty list or `*/*`.
  public var types: [String]

  /// Enclosures of the given MIME `types` (empty: all) downloaded into `folder`.
  public init(folder: String, types: [String] = []) {
    self.folder = folder
    self.types = types
  }

  /// Whether an enclosure of MIME type `type` is wanted (parameters such as
  /// `; charset=` are ignored; case does not matter).
  public func accepts(type: String?) -> Bool {
    if types.isEmpty || types.contains("*/*") { return true }
    guard let type else { return false }
    let bare = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
    return types.contains { pattern in
      let p = pattern.lowercased()
      if p.hasSuffix("/*") { return bare.hasPrefix(p.dropLast()) }
      return bare == p
    }
  }

  /// The config's JSON for it.
  var jsonValue: JSONValue {
    var m: [(key: String, value: JSONValue)] = [("to", .string(folder))]
    if !types.isEmpty { m.append(("types", .array(types.map(JSONValue.string)))) }
    return .object(m)
  }
}

extension ConfigReader {
  static let enclosureKeys = ["to", "types"]

  /// Reads a feed source's `downloadEnclosures` object.
  mutating func enclosureDownloads(_ v: JSONValue?, at path: String, format: SourceFormat) -> EnclosureDownloads? {
    guard let v else { return nil }
    guard let m = members(v, at: path, allowed: ConfigReader.enclosureKeys) else { return nil }
    if format != .feed {
      problem(path, "\"downloadEnclosures\" applies to feed sources only (their entries have enclosures)")
    }
    let folder = string(m["to"], at: join(path, "to"))
    if m["to"] == nil { problem(join(path, "to"), "missing: the folder the enclosures are downloaded to") }
    let types = strings(m["types"], at: join(path, "types")) ?? []
    for (i, t) in types.enumerated() {
      let parts = t.split(separator: "/", omittingEmptySubsequences: false)
      let valid = parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty && !parts[0].contains("*")
        || t == "*/*"
      if !valid || parts[1].contains("*") && parts[1] != "*" {
        problem("\(join(path, "types"))[\(i)]", "expected a MIME type such as \"audio/mpeg\" or \"audio/*\", found \"\(t)\"")
      }
    }
    return folder.map { EnclosureDownloads(folder: $0, types: types) }
  }
}

extension Downloads {
  /// Queues the enclosures of `source`'s current records as downloads into its
  /// `downloadEnclosures` folder (created when missing); returns how many were new.
  ///
  /// - Parameter directory: the config file's folder: a relative `to` is
  ///   taken from there (nil: from the working folder).
  /// - Throws: ``DownloadError`` (`folder`) when the folder cannot be made; store errors.
  @discardableResult
  public func queueEnclosures(of source: Source, directory: String? = nil) async throws -> Int {
    guard var rule = source.downloadEnclosures else { return 0 }
    if !rule.folder.hasPrefix("/"), let directory, !directory.isEmpty, directory != "." {
      rule.folder = (directory as NSString).appendingPathComponent(rule.folder)
    }
    if !isFolder(rule.folder) {
      do {
        try FileManager.default.createDirectory(atPath: rule.folder, withIntermediateDirectories: true)
      } catch {
        throw DownloadError(.folder, "cannot create \(rule.folder) for the enclosures of \(source.name): \(error.localizedDescription)")
      }
    }
    let started = Date()
    var queued = 0
    var after: Int64 = 0
    while true {
      let records = try await store.records(source: source.name, afterID: after, limit: 500)
      guard let last = records.last else { break }
      after = last.id
      for record in records where record.removedAt == nil {
        // Only the `enclosures` member is parsed, not the whole record.
        guard let text = ChangedFields.member("enclosures", of: record.fieldsJSON),
          case .array(let enclosures)? = try? JSONValue.parse(Array(text.utf8))
        else { continue }
        for enclosure in enclosures {
          guard case .string(let url)? = enclosure["url"] else { continue }
          var type: String?
          if case .string(let t)? = enclosure["type"] { type = t }
          guard rule.accepts(type: type) else { continue }
          // An enclosure that is not an http(s) URL is skipped, not an error.
          guard let entry = try? await enqueue(url, to: rule.folder, source: source.name, repeat: .keep) else { continue }
          if entry.createdAt >= started { queued += 1 }
        }
      }
    }
    return queued
  }
}
