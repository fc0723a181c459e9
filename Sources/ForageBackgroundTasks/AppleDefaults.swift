/// The adapter's defaults, in one place.
enum AppleDefaults {
  /// How long after iOS's expiration handler the task is completed, whatever
  /// the job is still doing: iOS kills an app that overruns, and the job
  /// has by then committed what it fetched (the rest waits for the next
  /// launch). Apple documents no figure ("as short a time as possible").
  static let expirationGrace: Duration = .seconds(1)
  /// How often a running Mac activity asks `shouldDefer`.
  static let deferPollInterval: Duration = .seconds(5)
}

extension Duration {
  /// The duration in seconds, as Foundation's `TimeInterval`.
  var timeInterval: Double {
    let (s, a) = components
    return Double(s) + Double(a) / 1e18
  }
}
