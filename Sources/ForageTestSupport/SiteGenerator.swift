#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
import Foundation

extension DemoSite {
  /// Writes the demo site as files under `directory` (created if needed), in the
  /// ``Layout/staticFiles`` layout, for a plain static server such as nginx:
  /// `index.html`, `category/C/index.html`, `category/C/page-K.html`,
  /// `product/N.html`, `about.html`, `private/staff.html`, `robots.txt`.
  ///
  ///     try DemoSite.writeStaticSite(to: "/tmp/site", products: 10_000, seed: 1)
  ///     let site = DemoSite(products: 10_000, seed: 1, layout: .staticFiles)
  ///     site.expectedProduct(42)   // what /product/42.html holds
  ///
  /// - Parameter origin: `http://host:port` the site will be served from; when given,
  ///   some links are absolute URLs on it (as when served by ``TestServer``).
  /// - Throws: ``TestServerError`` naming the file that could not be written.
  public static func writeStaticSite(to directory: String, products: Int, seed: UInt64,
                                     origin: String? = nil) throws {
    let site = DemoSite(products: products, seed: seed, layout: .staticFiles)
    let fm = FileManager.default
    var madeFolders: Set<String> = []
    for path in site.pagePaths {
      guard let response = site.response(for: path, origin: origin) else { continue }
      var file = directory + path
      if file.hasSuffix("/") { file += "index.html" }
      let folder = (file as NSString).deletingLastPathComponent
      if madeFolders.insert(folder).inserted {
        do {
          try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
          throw TestServerError(.writeSite, call: "createDirectory", errno: 0, path: folder)
        }
      }
      try writeFile(response.body, to: file)
    }
  }

  /// Writes a file with plain POSIX calls: `FileManager.createFile` writes atomically
  /// (temporary file, rename, sync), which made 10,000 pages take a minute.
  private static func writeFile(_ bytes: [UInt8], to file: String) throws {
    let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    guard fd >= 0 else { throw TestServerError(.writeSite, call: "open", errno: errno, path: file) }
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { throw TestServerError(.writeSite, call: "write", errno: errno, path: file) }
      offset += n
    }
  }
}
