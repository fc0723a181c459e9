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
    // A failure keeps its reason where a file would be (its body is empty).
    let failed = verdict == .disallowAll
    return RobotsAnswer(
      origin: file.origin, verdict: verdict, body: failed ? [] : file.body, fetchedAt: file.fetchedAt,
      expiresAt: file.expiresAt, failure: failed && !file.body.isEmpty ? String(decoding: file.body, as: UTF8.self) : nil)
  }

  func keepRobotsAnswer(_ answer: RobotsAnswer) async {
    let body = answer.verdict == .disallowAll ? Array((answer.failure ?? "").utf8) : answer.body
    try? await store.keepRobotsFile(
      RobotsFile(
        origin: answer.origin, verdict: answer.verdict.rawValue, body: body, fetchedAt: answer.fetchedAt,
        expiresAt: answer.expiresAt))
  }
}
