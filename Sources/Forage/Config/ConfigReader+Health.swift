import ForageStore

// A source's `health` object (described in docs/configuration.md): when its
// changes are held instead of applied.

extension ConfigReader {
  static let healthKeys = ["hold", "removedShare", "minRemoved", "watchedCoverage", "collapsedCoverage", "minRecords"]

  /// Reads a source's `health` into `source`, when it has one.
  mutating func sourceHealth(_ m: [String: JSONValue], at path: String, into source: inout Source) {
    guard let v = m["health"] else { return }
    let at = join(path, "health")
    guard let h = members(v, at: at, allowed: ConfigReader.healthKeys) else { return }
    var policy = HealthPolicy()
    if let hold = bool(h["hold"], at: join(at, "hold")) { policy.enabled = hold }
    if let share = number(h["removedShare"], at: join(at, "removedShare"), in: 0...1) { policy.removedShare = share }
    if let least = int(h["minRemoved"], at: join(at, "minRemoved"), min: 1) { policy.minRemoved = least }
    if let watched = number(h["watchedCoverage"], at: join(at, "watchedCoverage"), in: 0...1) {
      policy.watchedCoverage = watched
    }
    if let collapsed = number(h["collapsedCoverage"], at: join(at, "collapsedCoverage"), in: 0...1) {
      policy.collapsedCoverage = collapsed
    }
    if let least = int(h["minRecords"], at: join(at, "minRecords"), min: 1) { policy.minRecords = least }
    if policy.collapsedCoverage > policy.watchedCoverage {
      problem(
        join(at, "collapsedCoverage"),
        "\(ConfigReader.numberText(policy.collapsedCoverage)) is above watchedCoverage "
          + "(\(ConfigReader.numberText(policy.watchedCoverage))): a watched field could never collapse")
    }
    source.health = policy
  }
}

extension Source {
  /// The source's `health` member, when it differs from the defaults.
  var healthMembers: [(key: String, value: JSONValue)] {
    let d = HealthPolicy()
    let p = health
    var h: [(key: String, value: JSONValue)] = []
    if p.enabled != d.enabled { h.append(("hold", .bool(p.enabled))) }
    if p.removedShare != d.removedShare { h.append(("removedShare", .number(p.removedShare))) }
    if p.minRemoved != d.minRemoved { h.append(("minRemoved", .number(Double(p.minRemoved)))) }
    if p.watchedCoverage != d.watchedCoverage { h.append(("watchedCoverage", .number(p.watchedCoverage))) }
    if p.collapsedCoverage != d.collapsedCoverage { h.append(("collapsedCoverage", .number(p.collapsedCoverage))) }
    if p.minRecords != d.minRecords { h.append(("minRecords", .number(Double(p.minRecords)))) }
    return h.isEmpty ? [] : [("health", .object(h))]
  }
}
