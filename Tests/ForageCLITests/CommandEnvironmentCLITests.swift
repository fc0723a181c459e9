import Foundation
import Testing

/// What the `command` channel's program sees of the CLI's environment
/// (issue 25): none of Forage's secrets, only what the config names.
@Suite struct CommandEnvironmentCLITests {
  /// Given to forage only, never set in this process.
  static let secrets = ["FORAGE_TEST_SECRET": "hunter2", "FORAGE_TEST_TOKEN": "xoxb-1234"]

  @Test func test_issue25_commandProgram_doesNotSeeForagesEnvironment() throws {
    let dir = TemporaryDirectory()
    let out = dir.file("env")
    let config = try dir.write(
      "forage.json",
      """
      {"sources": [{"name": "s", "url": "http://127.0.0.1:9/", "extract": {"t": "h1"}}],
       "notify": [{"command": ["sh", "-c", "env > '\(out)'"]}]}
      """)
    let result = try runForage(["notify", "--config", config, "--test", "command"], environment: Self.secrets)
    #expect(result.status == 0, "\(result.stderr)")
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(!text.contains("hunter2") && !text.contains("FORAGE_TEST_SECRET"), "\(text)")
    #expect(!text.contains("xoxb-1234"), "\(text)")
    #expect(text.contains("FORAGE_MESSAGE_ID=msg_"), "\(text)")
    #expect(text.contains("PATH="))
  }

  @Test func test_issue25_commandProgram_getsWhatTheConfigNames() throws {
    let dir = TemporaryDirectory()
    let out = dir.file("env")
    let config = try dir.write(
      "forage.json",
      """
      {"sources": [{"name": "s", "url": "http://127.0.0.1:9/", "extract": {"t": "h1"}}],
       "notify": [{"command": ["sh", "-c", "env > '\(out)'"],
                   "env": {"LOG_LEVEL": "debug"}, "passEnv": ["FORAGE_TEST_TOKEN"]}]}
      """)
    let result = try runForage(["notify", "--config", config, "--test", "command"], environment: Self.secrets)
    #expect(result.status == 0, "\(result.stderr)")
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(!text.contains("hunter2"), "\(text)")
    #expect(text.contains("FORAGE_TEST_TOKEN=xoxb-1234\n"), "\(text)")
    #expect(text.contains("LOG_LEVEL=debug\n"), "\(text)")
  }
}
