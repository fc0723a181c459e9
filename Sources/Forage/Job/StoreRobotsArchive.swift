import Foundation
import ForageHTTP
import ForageStore

/// The store as the fetcher's ``RobotsArchive``: robots.txt answers kept across
/// launches. A store error reads as "nothing kept" and drops the answer (the
/// fetcher then asks the origin, as it would without an archive).
struct StoreRobotsArchive: RobotsArchive {
  let store: any Store

  func robotsAnswer(origin: String) async -> RobotsAnswer? {
    guard let file = try? await store.robotsFile(origin: origin),
      let verdict = RobotsAnswer.Verdict(rawValue: file.verdict)
    else { return nil }
    return RobotsAnswer(
      origin: file.origin, verdict: verdict, body: file.body, fetchedAt: file.fetchedAt, expiresAt: file.expiresAt)
  }

  func keepRobotsAnswer(_ answer: RobotsAnswer) async {
    try? await store.keepRobotsFile(
      RobotsFile(
        origin: answer.origin, verdict: answer.verdict.rawValue, body: answer.body, fetchedAt: answer.fetchedAt,
        expiresAt: answer.expiresAt))
  }
}
