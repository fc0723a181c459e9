import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
import ForageSupport

/// `forage init`: writes a commented example config.
struct InitCommand: Command {
  static let name = "init"
  static let abstract = "Write an example config, or a service file for the daemon."
  static let arguments: [Argument] = [
    .optionalPositional("DIR", "The folder to write forage.json in (created if missing).", default: "."),
    .option(
      "--port", "N", "The demo site's port the config points at.", default: String(DemoCommand.defaultPort)),
    .option("--service", "MANAGER", "Write a service file instead: systemd (a unit) or launchd (a LaunchAgent)."),
    .option("--config", "FILE", "With --service: the config the daemon runs.", default: EngineDefaults.configFile),
    .option("--store", "PATH", "With --service: the store the daemon fills.", default: "the config's"),
    .flag("--system", "With --service systemd: a system unit (run as this user) instead of a user unit."),
    .option("--output", "FILE", "With --service: write the file there (never over an existing one).", default: "standard output"),
  ]
  static let discussion = """
    Writes DIR/forage.json: a task, a source that crawls the demo shop and
    extracts products, change conditions and a notification channel (a
    JSON Lines file), each explained by a "//" key (JSON has no comments;
    Forage skips "//" keys in config objects). An existing forage.json is
    never replaced. Then prints the next commands to try.

    With --service, writes instead a service file that runs forage daemon
    with absolute paths of this forage, the config and its store: a
    systemd unit (Type=notify, restarted on failure, a watchdog, reload by
    SIGHUP, a read-only system but for the store's and the config's
    folders; a user unit unless --system) or a launchd LaunchAgent (run at
    load, kept alive, logs beside the store). The config must exist and be
    valid. The file goes to standard output, or to --output, which must not
    exist yet.
    """

  var directory = "."
  var port = DemoCommand.defaultPort
  /// `--service` and its options, when asked for.
  var service: ServiceRequest?

  init(_ args: inout ArgumentList) throws(UsageError) {
    if let p = try args.option("--port") {
      guard let n = UInt16(p), n > 0 else { throw UsageError("--port expects a number from 1 to 65535, not \"\(p)\"") }
      port = n
    }
    service = try ServiceRequest(&args)
    directory = args.optionalPositional("DIR") ?? directory
    if service != nil && directory != "." {
      throw UsageError("--service writes a service file, not a config in a folder: drop \"\(directory)\" (--output names the file)")
    }
    try args.expectNoMore()
  }

  /// The example config, commented, for a demo site at `baseURL`.
  static func example(baseURL: String) -> String {
    """
    {
      "//": "An example Forage config: forage run --config forage.json. Keys named // are comments. Reference: docs/configuration.md",
      "store": "forage.sqlite",
      "fetch": {
        "//": "How every source fetches: politeness per host, limits. A source may override any of these in its own fetch object.",
        "perHostConcurrency": 4,
        "perHostDelay": "0s",
        "timeout": "15s"
      },
      "notify": [
        {"//": "Notable changes are appended here as JSON Lines; a webhook or a command works the same way (docs/notifications.md).",
         "name": "log", "file": "changes.jsonl"}
      ],
      "tasks": [
        {"//": "Like an iOS app refresh task: about 30 s, every 15 minutes at the earliest. forage daemon runs it; forage simulate forecasts it.",
         "id": "com.example.refresh", "kind": "appRefresh", "every": "15m", "budget": "30s", "sources": ["catalog"]}
      ],
      "sources": [
        {
          "//": "The demo shop: start at its home page, follow links on the same host, one record per product page.",
          "name": "catalog",
          "url": "\(baseURL)/",
          "match": "div.product",
          "extract": {
            "//": "Field rules: a CSS selector, or an object with a type conversion.",
            "title": "h1.product-title",
            "price": {"css": "span.price", "type": "number"},
            "sku": {"css": "div.product", "attr": "data-sku", "required": true}
          },
          "key": ["sku"],
          "crawl": {"//": "Depth and size limits of the crawl.", "maxDepth": 5, "maxPages": 5000, "revisitAfter": "1h"},
          "notifyWhen": [
            {"//": "Tell me when a price drops, or a product disappears.", "field": "price", "decreases": true},
            {"kind": "removed"}
          ],
          "history": {"//": "Keep the last 50 changes of each product, for 90 days.", "keep": 50, "maxAge": "90d"}
        }
      ]
    }

    """
  }

  /// Why a file could not be created in `folder`, as words about the folder.
  static func why(_ err: Int32, folder: String) -> String {
    switch err {
    case EACCES, EPERM: return "this user may not create files in \(folder)"
    case EROFS: return "\(folder) is on a read-only disk"
    case ENOSPC, EDQUOT: return "the disk is full"
    default: return String(cString: strerror(err)).lowercased()
    }
  }

  /// Why the folder `path` (and the folders above it) could not be created:
  /// what the closest existing folder above it is.
  static func folderProblem(_ path: String) -> String {
    let fm = FileManager.default
    var above = (path as NSString).standardizingPath
    while !fm.fileExists(atPath: above) {
      let parent = (above as NSString).deletingLastPathComponent
      if parent == above || parent.isEmpty {
        above = "."
        break
      }
      above = parent
    }
    var isFolder: ObjCBool = false
    if fm.fileExists(atPath: above, isDirectory: &isFolder), !isFolder.boolValue {
      return "\(above) is a file, not a folder"
    }
    if access(above, W_OK) != 0 { return why(errno, folder: above) }
    return "it could not be made in \(above)"
  }

  func run(_ out: Terminal) async -> ExitStatus {
    if let service { return service.run(out) }
    let fm = FileManager.default
    var isFolder: ObjCBool = false
    if fm.fileExists(atPath: directory, isDirectory: &isFolder), !isFolder.boolValue {
      out.error("forage init: \(directory) is a file, not a folder")
      return .badInput
    }
    let path = (directory as NSString).appendingPathComponent("forage.json")
    if fm.fileExists(atPath: path) || (try? fm.destinationOfSymbolicLink(atPath: path)) != nil {
      out.error("forage init: \(path) exists; it is left as it is (remove it or pick another folder)")
      return .badInput
    }
    do {
      try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let text = InitCommand.example(baseURL: "http://127.0.0.1:\(port)")
      // Exclusive creation: a file that appeared meanwhile is not replaced.
      let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
      guard fd >= 0 else {
        let e = errno
        out.error("forage init: cannot create \(path): \(InitCommand.why(e, folder: directory))")
        return .badInput
      }
      var bytes = text
      let failed = bytes.withUTF8 { writeAll(fd, $0) }
      close(fd)
      if failed != 0 {
        out.error("forage init: cannot write \(path): \(String(cString: strerror(failed)))")
        return .badInput
      }
    } catch {
      out.error("forage init: cannot create the folder \(directory): \(InitCommand.folderProblem(directory))")
      return .badInput
    }
    let portOption = port == DemoCommand.defaultPort ? "" : " --port \(port)"
    let store = (directory as NSString).appendingPathComponent("forage.sqlite")
    out.print("Wrote \(path). Next:")
    out.print("  forage demo --serve\(portOption)          # in another terminal: the shop the config crawls")
    out.print("  forage run --config \(path)       # one launch now")
    out.print("  forage status --store \(store)    # what ran, how fresh, what changed")
    return .ok
  }
}
