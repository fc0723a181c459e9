import Foundation
import Testing

@testable import ForageTestSupport

@Suite struct StaticDirectoryTests {
  /// A temporary folder with a few files, the served root, inside a folder
  /// that also holds `secret.txt` (outside the root); `cleanup` removes both.
  struct Folder {
    let outer: String
    let path: String

    init() throws {
      outer = FileManager.default.temporaryDirectory.appendingPathComponent("forage-static-\(UUID().uuidString)").path
      path = outer + "/site"
      let fm = FileManager.default
      try fm.createDirectory(atPath: path + "/docs/sub", withIntermediateDirectories: true)
      try fm.createDirectory(atPath: path + "/empty", withIntermediateDirectories: true)
      try "<h1>root</h1>".write(toFile: path + "/index.html", atomically: true, encoding: .utf8)
      try "<h1>docs</h1>".write(toFile: path + "/docs/index.html", atomically: true, encoding: .utf8)
      try "body{}".write(toFile: path + "/docs/site.css", atomically: true, encoding: .utf8)
      try "{\"a\":1}".write(toFile: path + "/docs/sub/data.json", atomically: true, encoding: .utf8)
      try "secret".write(toFile: outer + "/secret.txt", atomically: true, encoding: .utf8)
      try "spaces".write(toFile: path + "/a file.txt", atomically: true, encoding: .utf8)
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: outer) }
  }

  @Test func test_files_areServedWithContentTypes() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    let css = try fetch(server.port, "/docs/site.css")
    #expect(css.bodyText == "body{}")
    #expect(css.header("content-type") == "text/css; charset=utf-8")
    #expect(try fetch(server.port, "/docs/sub/data.json").header("content-type") == "application/json")
    #expect(try fetch(server.port, "/a%20file.txt").bodyText == "spaces")
  }

  @Test func test_folders_serveIndexHtml_afterARedirectToTheSlash() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    #expect(try fetch(server.port, "/").bodyText == "<h1>root</h1>")
    let redirect = try fetch(server.port, "/docs?x=1")
    #expect(redirect.status == 301)
    #expect(redirect.header("location") == "/docs/?x=1")
    #expect(try fetch(server.port, "/docs/").bodyText == "<h1>docs</h1>")
    #expect(try fetch(server.port, "/empty/").status == 404)
  }

  @Test func test_missingFile_is404() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    #expect(try fetch(server.port, "/nope.html").status == 404)
  }

  @Test(arguments: [
    "/../etc/passwd", "/docs/../../etc/passwd", "/%2e%2e/etc/passwd", "/docs/%2E%2E/%2e%2e/x", "/../secret.txt",
    "/docs/%2e%2e/%2E%2E/secret.txt",
  ])
  func test_traversal_isRefused(target: String) throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    let response = try fetch(server.port, target)
    #expect(response.status == 403)
    #expect(!response.bodyText.contains("root:"))
    #expect(!response.bodyText.contains("secret"))
  }

  @Test func test_symlinkOutOfTheRoot_isRefused() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    try FileManager.default.createSymbolicLink(atPath: folder.path + "/escape", withDestinationPath: "/etc")
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    #expect(try fetch(server.port, "/escape/hostname").status == 403)
  }

  @Test func test_validators_give304() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    let full = try fetch(server.port, "/docs/site.css")
    let etag = try #require(full.header("etag"))
    let lastModified = try #require(full.header("last-modified"))
    #expect(try fetch(server.port, "/docs/site.css", headers: ["If-None-Match: \(etag)"]).status == 304)
    #expect(try fetch(server.port, "/docs/site.css", headers: ["If-None-Match: \"other\""]).status == 200)
    #expect(try fetch(server.port, "/docs/site.css", headers: ["If-Modified-Since: \(lastModified)"]).status == 304)
    #expect(try fetch(server.port, "/docs/site.css", headers: ["If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT"]).status == 200)
  }

  @Test func test_post_is405() throws {
    let folder = try Folder()
    defer { folder.cleanup() }
    let server = try TestServer(directory: folder.path)
    defer { server.stop() }
    #expect(try fetch(server.port, "/index.html", method: "POST", headers: ["Content-Length: 0"]).status == 405)
  }
}
