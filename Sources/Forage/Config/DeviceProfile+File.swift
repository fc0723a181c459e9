import Foundation
import ForageScheduler

extension DeviceProfile {
  /// A built-in profile by name, or the profile file at a path (a name that
  /// ends in `.json` or contains a `/`), as `forage simulate --profile` takes.
  ///
  ///     let commuter = try DeviceProfile.named(orPath: "commuter")
  ///     let mine = try DeviceProfile.named(orPath: "profiles/night-nurse.json")
  ///
  /// - Throws: ``ProfileError`` listing the built-in names when `nameOrPath`
  ///   is neither, or the problems of the file (see ``load(path:)``).
  public static func named(orPath nameOrPath: String) throws(ProfileError) -> DeviceProfile {
    if let builtIn = builtIns.first(where: { $0.name == nameOrPath }) { return builtIn }
    if nameOrPath.hasSuffix(".json") || nameOrPath.contains("/") { return try load(path: nameOrPath) }
    throw ProfileError(
      "unknown profile \"\(nameOrPath)\"; built-in profiles: \(builtIns.map(\.name).joined(separator: ", ")), "
        + "or a path to a JSON file")
  }

  /// Reads and validates a profile file.
  ///
  ///     let profile = try DeviceProfile.load(path: "night-nurse.json")
  ///
  /// - Throws: ``ProfileError`` naming the file when it cannot be read or
  ///   is not JSON, else listing every problem with its path, as a config's
  ///   are (`appOpens[0].atx: unknown key "atx" (did you mean "at"?)`).
  public static func load(path: String) throws(ProfileError) -> DeviceProfile {
    guard let data = FileManager.default.contents(atPath: path) else {
      var isFolder: ObjCBool = false
      let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
      let reason = !exists ? "no such file" : isFolder.boolValue ? "it is a folder, not a file" : "cannot read the file"
      throw ProfileError(file: path, problems: [reason])
    }
    return try parse(Array(data), file: path)
  }

  /// Parses and validates profile JSON: unknown keys, missing times, times,
  /// durations, probabilities and names of networks and settings are
  /// checked, each problem reported with its path.
  ///
  ///     let p = try DeviceProfile.parse(Array(#"{"name": "x", "appOpens": [{"at": "19:30"}]}"#.utf8))
  ///
  /// - Throws: ``ProfileError`` listing every problem.
  public static func parse(_ bytes: [UInt8], file: String = "<profile>") throws(ProfileError) -> DeviceProfile {
    let json: JSONValue
    do {
      json = try JSONValue.parse(bytes)
    } catch {
      throw ProfileError(file: file, problems: ["not valid JSON: \(error)"])
    }
    var reader = ConfigReader()
    let profile = reader.deviceProfile(json)
    guard let profile, reader.problems.isEmpty else {
      throw ProfileError(file: file, problems: reader.problems.map(\.description))
    }
    return profile
  }
}
