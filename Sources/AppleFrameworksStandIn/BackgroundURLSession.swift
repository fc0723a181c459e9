// The stand-in's part of background URLSession: see BackgroundTasks.swift
// for what this module is (the only place that assumes Apple's behaviour).
//
// FoundationNetworking (Linux) has `URLSession`, download tasks and
// `URLSessionDownloadDelegate` with Apple's signatures, so the adapter uses
// them directly; what it lacks is the background session itself
// (`URLSessionConfiguration.background(withIdentifier:)` is marked
// unavailable there, and `sessionSendsLaunchEvents` does not exist). The
// adapter makes its configuration through one `#if`: Apple's background
// configuration on Apple platforms, this one on Linux. Here the transfers
// run in the test's process, and the events a background session adds
// (the app relaunched for them, `urlSessionDidFinishEvents(forBackgroundURLSession:)`
// after the last one) are delivered by the test, as the system would.

// Linux only: on Apple platforms this module is empty, so it can never
// stand in for the real frameworks there.
#if os(Linux)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Test only: what stands in for Apple's background session configuration.
public enum StandInBackgroundSession {
  /// An ordinary session configuration standing in for
  /// `URLSessionConfiguration.background(withIdentifier:)`: the
  /// identifier is kept (Apple's background configuration carries it in
  /// `identifier`), the transfers run in this process.
  ///
  /// - SeeAlso: <https://developer.apple.com/documentation/foundation/urlsessionconfiguration/background(withidentifier:)>
  public static func configuration(identifier: String) -> URLSessionConfiguration {
    let configuration = URLSessionConfiguration.default
    configuration.httpAdditionalHeaders = ["X-Background-Session": identifier]
    return configuration
  }
}
#endif
