import Foundation
import Testing
import ForageStore
@testable import Forage

/// What a command channel's program sees of Forage's environment (issue 25):
/// the basic variables and what the channel names, never the rest.
@Suite struct CommandEnvironmentTests {
  /// The environment `env` as a program wrote it (`env > file`).
  static func environment(in file: String) throws -> [String: String] {
    let text = try String(contentsOfFile: file, encoding: .utf8)
    var out: [String: String] = [:]
    for line in text.split(separator: "\n") {
      guard let eq = line.firstIndex(of: "=") else { continue }
      out[String(line[..<eq])] = String(line[line.index(after: eq)...])
    }
    return out
  }

  /// What Forage's environment holds in these tests: the basic variables,
  /// secrets, and a token a channel may name.
  static let parent = [
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/forage-test", "LANG": "C.UTF-8", "TZ": "UTC",
    "FORAGE_DATABASE_URL": "postgres://forage:hunter2@db/forage", "FORAGE_HOOK_SECRET": "whsec_c2VjcmV0",
    "SLACK_TOKEN": "xoxb-1234",
  ]
  /// Variables a shell sets itself.
  static let shellOwn: Set<String> = ["PWD", "OLDPWD", "SHLVL", "_"]

  @Test func test_issue25_commandProgram_getsOnlyTheBasicVariables_notForagesSecrets() async throws {
    let dir = TemporaryDirectory()
    let out = dir.file("env")
    let channel = NotifyChannel(target: .command(["sh", "-c", "env > '\(out)'"]))
    let problem = await Notifier.sendTest(
      channel, transport: Engine.defaultTransport(), directory: dir.path, environment: Self.parent)
    #expect(problem == nil)
    let env = try Self.environment(in: out)
    #expect(Set(env.keys).subtracting(Self.shellOwn) == ["PATH", "HOME", "LANG", "TZ", "FORAGE_MESSAGE_ID"], "\(env.keys.sorted())")
    #expect(env["HOME"] == "/home/forage-test")
    #expect(env["PATH"] == "/usr/local/bin:/usr/bin:/bin")
    #expect(env["FORAGE_MESSAGE_ID"]?.hasPrefix("msg_") == true)
  }

  @Test func test_issue25_commandProgram_getsTheChannelsEnv_andPassEnv() async throws {
    let dir = TemporaryDirectory()
    let out = dir.file("env")
    let channel = NotifyChannel(
      target: .command(["sh", "-c", "env > '\(out)'"]), env: ["LOG_LEVEL": "debug", "HOME": "/srv/forage"],
      passEnv: ["SLACK_TOKEN"])
    var parent = Self.parent
    parent["PATH"] = nil  // the program is still found, on the default path
    let problem = await Notifier.sendTest(
      channel, transport: Engine.defaultTransport(), directory: dir.path, environment: parent)
    #expect(problem == nil)
    let env = try Self.environment(in: out)
    #expect(
      Set(env.keys).subtracting(Self.shellOwn)
        == ["PATH", "HOME", "LANG", "TZ", "LOG_LEVEL", "SLACK_TOKEN", "FORAGE_MESSAGE_ID"], "\(env.keys.sorted())")
    #expect(env["SLACK_TOKEN"] == "xoxb-1234")
    #expect(env["LOG_LEVEL"] == "debug")
    #expect(env["HOME"] == "/srv/forage", "env wins over Forage's HOME")
    #expect(env["PATH"] == CommandRunner.defaultSearchPath)
  }

  @Test func test_issue25_passEnv_aVariableNotSet_failsTheAttempt_namingIt() async throws {
    let dir = TemporaryDirectory()
    let out = dir.file("ran")
    let channel = NotifyChannel(target: .command(["sh", "-c", "touch '\(out)'"]), passEnv: ["SLACK_TOKEN"])
    var parent = Self.parent
    parent["SLACK_TOKEN"] = nil
    let problem = await Notifier.sendTest(
      channel, transport: Engine.defaultTransport(), directory: dir.path, environment: parent)
    #expect(problem?.contains("SLACK_TOKEN") == true, "\(problem ?? "")")
    #expect(problem?.contains("is not set") == true, "\(problem ?? "")")
    #expect(!FileManager.default.fileExists(atPath: out), "the program ran without the variable")
  }
}
