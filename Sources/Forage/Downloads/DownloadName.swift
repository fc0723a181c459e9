import ForageHTTP
import ForageStore
import ForageURL

/// File names for downloads: taken from `Content-Disposition` (RFC 6266, `filename*`
/// first) or the URL's last path segment, and made safe to create in a folder the
/// user named.
///
///     DownloadName.sanitize("../../etc/passwd")       // "passwd"
///     DownloadName.sanitize(".bashrc")                // "bashrc"
///     DownloadName.sanitize("a\u{202E}gpj.exe")       // "agpj.exe"
///     DownloadName.candidates("report.pdf").prefix(3) // report.pdf, report-1.pdf, report-2.pdf
package enum DownloadName {
  /// The name used when neither the server nor the URL gives a usable one.
  package static let fallback = "download"

  /// `raw` made safe as one file name in a folder, or nil when nothing usable is left:
  ///
  /// - only what follows the last `/` or `\` is kept (RFC 6266 §4.3: no path);
  /// - control characters (C0, DEL, C1), format characters (bidirectional overrides,
  ///   zero-width marks) and line or paragraph separators are removed;
  /// - characters other systems refuse in names (`<>:"|?*`) become `_`;
  /// - leading dots and spaces go (no hidden files, no `..`), and trailing ones;
  /// - the result is cut to at most `maxLength` UTF-8 bytes, keeping a short
  ///   extension.
  package static func sanitize(_ raw: String, maxLength: Int = DownloadDefaults.maxNameLength) -> String? {
    let last = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
    var scalars = String.UnicodeScalarView()
    for scalar in last.unicodeScalars {
      switch scalar.properties.generalCategory {
      case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
        continue
      default:
        break
      }
      if scalar.properties.isNoncharacterCodePoint { continue }
      if "<>:\"|?*".unicodeScalars.contains(scalar) {
        scalars.append("_")
      } else if scalar.properties.isWhitespace {
        scalars.append(" ")  // one plain space for any other space character
      } else {
        scalars.append(scalar)
      }
    }
    var name = Substring(String(scalars))
    while let first = name.first, first == "." || first == " " { name = name.dropFirst() }
    while let end = name.last, end == "." || end == " " { name = name.dropLast() }
    guard !name.isEmpty else { return nil }
    return bounded(String(name), maxLength: max(16, maxLength))
  }

  /// The sanitised last path segment of `url` (percent-decoded), or nil.
  package static func fromURL(_ url: WebURL) -> String? {
    let path = url.path
    guard let segment = path.split(separator: "/", omittingEmptySubsequences: true).last else { return nil }
    return sanitize(percentDecoded(segment))
  }

  /// The name for a download of `url` answered with `headers`: the
  /// `Content-Disposition` file name, else the URL's (the one first asked for, then
  /// the one that answered after redirects), else ``fallback``; sanitised.
  package static func suggested(headers: HTTPHeaders?, url: WebURL, answeredBy final: WebURL? = nil) -> String {
    if let value = headers?["Content-Disposition"], let name = ContentDisposition(value)?.filename,
      let safe = sanitize(name)
    {
      return safe
    }
    return fromURL(url) ?? final.flatMap(fromURL) ?? fallback
  }

  /// What a file lands as when its name is `name`: `name` itself, or
  /// `name.download` when SQLite would take `name` for a database's side file
  /// (`forage.sqlite-journal`: the next open of `forage.sqlite` would play it
  /// back into the store or delete it; see ``SQLiteSideFiles``).
  ///
  ///     DownloadName.landing("forage.sqlite-journal")   // "forage.sqlite-journal.download"
  package static func landing(_ name: String) -> String {
    SQLiteSideFiles.isReserved(name: name) ? name + renamedSuffix : name
  }

  /// What ``landing(_:)`` appends to a reserved name.
  package static let renamedSuffix = ".download"

  /// Why a download named `name` lands under another name, as a clause for
  /// listings; nil when it lands under its own (or a free `-1`… variant).
  ///
  /// - Parameter landed: the name it landed as (default: ``landing(_:)``).
  package static func renaming(_ name: String, landedAs landed: String? = nil) -> String? {
    guard let side = SQLiteSideFiles.sideFile(named: name) else { return nil }
    return "saved as \(landed ?? landing(name)): SQLite would take \(name) for the \(side.role) of a database "
      + "named \(side.database)"
  }

  /// `name`, then `stem-1.ext`, `stem-2.ext`… for a folder where it is taken.
  package static func candidates(_ name: String) -> some Sequence<String> {
    let (stem, ext) = split(name)
    return (0...).lazy.map { $0 == 0 ? name : "\(stem)-\($0)\(ext)" }
  }

  /// The name cut to `maxLength` UTF-8 bytes at a character boundary, keeping an
  /// extension of up to 16 bytes.
  static func bounded(_ name: String, maxLength: Int) -> String {
    guard name.utf8.count > maxLength else { return name }
    let (stem, ext) = split(name)
    let keep = ext.utf8.count <= 16 ? ext : ""
    var out = ""
    for c in stem {
      if out.utf8.count + String(c).utf8.count + keep.utf8.count > maxLength { break }
      out.append(c)
    }
    while out.last == "." || out.last == " " { out.removeLast() }
    return (out.isEmpty ? fallback : out) + keep
  }

  /// `archive.tar.gz` → (`archive.tar`, `.gz`); a name without a dot after its first
  /// character has no extension.
  static func split(_ name: String) -> (stem: String, ext: String) {
    guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
    return (String(name[..<dot]), String(name[dot...]))
  }

  /// Percent-decodes a path segment; bytes that are not UTF-8 become U+FFFD (and are
  /// kept, as a visible mark).
  static func percentDecoded(_ segment: Substring) -> String {
    String(decoding: percentDecode(Array(segment.utf8)), as: UTF8.self)
  }
}
