import Foundation
import Testing
import Forage

/// Examples/iOS: its Info.plist permits exactly its config's tasks (issue
/// 26), with the background modes their kinds need; a mismatch is a task
/// iOS refuses, or an identifier with no handler.
@Suite struct ExampleAppTests {
  static let folder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Examples/iOS")

  @Test func test_issue26_infoPlistIdentifiers_areTheConfigsTaskIdentifiers() throws {
    let data = try Data(contentsOf: Self.folder.appendingPathComponent("Info.plist"))
    let plist = try #require(try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
    let permitted = try #require(plist["BGTaskSchedulerPermittedIdentifiers"] as? [String])
    let modes = try #require(plist["UIBackgroundModes"] as? [String])
    let config = try ForageConfig.load(path: Self.folder.appendingPathComponent("ForageExample/forage.json").path)

    // A continued-processing task is permitted as `<id>.*`.
    let expected = config.tasks.map { $0.kind == .continuedProcessing ? $0.id + ".*" : $0.id }
    #expect(permitted.sorted() == expected.sorted())
    #expect(Set(permitted).count == permitted.count, "each identifier once")
    if config.tasks.contains(where: { $0.kind == .appRefresh }) { #expect(modes.contains("fetch")) }
    if config.tasks.contains(where: { $0.kind == .processing }) { #expect(modes.contains("processing")) }
  }
}
