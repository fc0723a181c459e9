import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
import ForageStore
import ForageSupport

/// `forage init --service systemd|launchd`: a service file for `forage
/// daemon` (see ``ServiceFiles``).
struct ServiceRequest: Equatable {
  var manager: ServiceFiles.Manager
  var config = EngineDefaults.configFile
  var store: String?
  var system = false
  var output: String?

  /// Reads `--service` and the options that go with it; nil without
  /// `--service` (then none of them may be given).
  init?(_ args: inout ArgumentList) throws(UsageError) {
    let service = try args.option("--service")
    let config = try args.option("--config")
    let store = try args.option("--store")
    let system = args.flag("--system")
    let output = try args.option("--output")
    guard let service else {
      let given = [config.map { _ in "--config" }, store.map { _ in "--store" }, system ? "--system" : nil,
                   output.map { _ in "--output" }].compactMap { $0 }
      if let first = given.first { throw UsageError("\(first) goes with --service systemd or --service launchd") }
      return nil
    }
    guard let manager = ServiceFiles.Manager(rawValue: service) else {
      throw UsageError("--service expects systemd or launchd, not \"\(service)\"")
    }
    if system && manager != .systemd { throw UsageError("--system is for --service systemd (a launchd agent is the user's)") }
    self.manager = manager
    self.config = config ?? self.config
    self.store = store
    self.system = system
    self.output = output
  }

  /// Builds the file from the config and writes it.
  func run(_ out: Terminal) -> ExitStatus {
    let command = "forage init --service \(manager.rawValue)"
    let configPath = ServiceRequest.absolute(config)
    guard FileManager.default.fileExists(atPath: configPath) else {
      out.error("\(command): no config at \(configPath) (forage init writes an example; --config names another)")
      return .badInput
    }
    let loaded: ForageConfig
    do { loaded = try ForageConfig.load(path: configPath) { out.error("warning: \(configPath): \($0)") } } catch {
      out.error("\(error)")
      return .badInput
    }
    if loaded.tasks.isEmpty {
      out.error("\(command): \(configPath) has no tasks, so forage daemon would refuse it; add a \"tasks\" array")
      return .badInput
    }
    let location = store.map { $0.contains("://") ? $0 : ServiceRequest.absolute($0) }
      ?? Engine.storeLocation(for: loaded, configPath: configPath)
    if location.contains("://"), StoreLocation.redacted(location) != location {
      out.error(
        "\(command): the store URL holds a password, which a service file would show to anyone who reads it; "
          + "leave it out (libpq reads ~/.pgpass or PGPASSWORD)")
      return .badInput
    }
    let configFolder = (configPath as NSString).deletingLastPathComponent
    var folders = [configFolder]
    var logFolder = configFolder
    if !location.contains("://") {
      let storeFolder = (ServiceRequest.absolute(location) as NSString).deletingLastPathComponent
      if !folders.contains(storeFolder) { folders.insert(storeFolder, at: 0) }
      logFolder = storeFolder
    }
    let spec = ServiceFiles.Spec(
      binary: ServiceRequest.executablePath(), config: configPath, writableFolders: folders,
      storeArgument: store == nil ? nil : (location.contains("://") ? location : ServiceRequest.absolute(location)),
      scope: system ? .system : .user, user: ServiceRequest.userName(), logFolder: logFolder)
    let text = manager == .systemd ? ServiceFiles.systemdUnit(spec) : ServiceFiles.launchdPlist(spec)
    guard let output else {
      out.write(1, text)
      return .ok
    }
    // Exclusive creation: an existing file (or link) is never replaced.
    let fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      let e = errno
      let folder = (output as NSString).deletingLastPathComponent
      let why = e == EEXIST
        ? "it exists; it is left as it is (remove it or name another file)"
        : e == ENOENT ? "the folder \(folder.isEmpty ? "." : folder) does not exist"
        : InitCommand.why(e, folder: folder.isEmpty ? "." : folder)
      out.error("\(command): cannot write \(output): \(why)")
      return .badInput
    }
    var bytes = text
    let failed = bytes.withUTF8 { writeAll(fd, $0) }
    close(fd)
    if failed != 0 {
      out.error("\(command): cannot write \(output): \(String(cString: strerror(failed)))")
      return .badInput
    }
    out.note("Wrote \(output).\(manager == .systemd ? " Install it as its first lines say." : " Install it:")")
    if manager == .launchd {
      out.note("  cp \(output) ~/Library/LaunchAgents/\(ServiceFiles.launchdLabel).plist")
      out.note("  launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/\(ServiceFiles.launchdLabel).plist")
    }
    return .ok
  }

  /// `path` from the working folder, made absolute and tidied.
  static func absolute(_ path: String) -> String {
    let full = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    return (full as NSString).standardizingPath
  }

  /// This forage's executable, absolute (what the service runs).
  static func executablePath() -> String {
    #if os(Linux)
    if let real = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return real }
    #endif
    return URL(fileURLWithPath: absolute(CommandLine.arguments[0])).resolvingSymlinksInPath().path
  }

  /// The user running this command (a system unit's `User=`).
  static func userName() -> String? {
    guard let entry = getpwuid(geteuid()), let name = entry.pointee.pw_name else { return nil }
    return String(cString: name)
  }
}
