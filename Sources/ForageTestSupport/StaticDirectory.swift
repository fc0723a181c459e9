import ForageSupport
import Foundation

/// Serves files under a root folder, as a plain static web server does.
///
/// A folder is answered by its `index.html` (a folder path without the trailing slash is
/// redirected to it first, 301), other files by their bytes with a content type from the
/// extension, `ETag` and `Last-Modified`, and 304 when the request's validators match.
/// Paths are percent-decoded; a `..` segment, a NUL, or anything resolving outside the
/// root is refused with 403; missing files are 404.
struct StaticDirectory: Sendable {
  let root: String

  init(root: String) {
    let url = URL(fileURLWithPath: root).standardizedFileURL.resolvingSymlinksInPath()
    self.root = url.path
  }

  func response(for request: RecordedRequest) -> TestResponse {
    guard request.method == "GET" || request.method == "HEAD" else {
      return TestResponse(status: 405, headers: [("Allow", "GET, HEAD")], body: Array("method not allowed\n".utf8))
    }
    let rawPath = request.path
    guard let decoded = rawPath.removingPercentEncoding, decoded.hasPrefix("/"), !decoded.contains("\0") else {
      return .text("bad path\n", status: 400)
    }
    let segments = decoded.split(separator: "/", omittingEmptySubsequences: true)
    if segments.contains(where: { $0 == ".." || $0.contains("\\") }) {
      return .text("path leaves the served folder\n", status: 403)
    }
    var path = segments.reduce(root) { $0 + "/" + $1 }
    let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    guard resolved == root || resolved.hasPrefix(root + "/") else {
      return .text("path leaves the served folder\n", status: 403)
    }
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { return .notFound(rawPath) }
    if isFolder.boolValue {
      guard rawPath.hasSuffix("/") else {
        let query = request.target.dropFirst(rawPath.count)
        return .redirect(to: rawPath + "/" + query, status: 301)
      }
      path += "/index.html"
      guard FileManager.default.fileExists(atPath: path) else { return .notFound(rawPath) }
    }
    guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
      let data = FileManager.default.contents(atPath: path)
    else { return .text("cannot read file\n", status: 403) }
    let size = (attributes[.size] as? NSNumber)?.intValue ?? data.count
    let modified = Int((attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)
    let etag = "\"\(String(size, radix: 16))-\(String(modified, radix: 16))\""
    let page = TestResponse(
      headers: [("Content-Type", Self.contentType(for: path)), ("ETag", etag),
                ("Last-Modified", HTTPDate.format(modified))],
      body: [UInt8](data))
    return Conditional.answer(request, page, etag: etag, lastModified: modified)
  }

  /// The content type for a file name's extension; `application/octet-stream` when unknown.
  static func contentType(for path: String) -> String {
    let name = path.split(separator: "/").last ?? ""
    guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
    switch name[name.index(after: dot)...].lowercased() {
    case "html", "htm": return "text/html; charset=utf-8"
    case "css": return "text/css; charset=utf-8"
    case "js", "mjs": return "text/javascript; charset=utf-8"
    case "json": return "application/json"
    case "xml": return "application/xml"
    case "rss": return "application/rss+xml"
    case "atom": return "application/atom+xml"
    case "txt": return "text/plain; charset=utf-8"
    case "csv": return "text/csv; charset=utf-8"
    case "svg": return "image/svg+xml"
    case "png": return "image/png"
    case "jpg", "jpeg": return "image/jpeg"
    case "gif": return "image/gif"
    case "webp": return "image/webp"
    case "ico": return "image/x-icon"
    case "pdf": return "application/pdf"
    case "gz": return "application/gzip"
    case "zip": return "application/zip"
    case "woff2": return "font/woff2"
    default: return "application/octet-stream"
    }
  }
}
