import Foundation
import Testing
@testable import Forage

/// Issue 25's config items: what a config may not hold, each refused with
/// its path.
@Suite struct Issue25ConfigTests {
  /// A config with one source, `extra` spliced into its top level.
  static func config(_ extra: String, source: String = #""name": "a", "url": "https://x.org/""#) -> String {
    #"{\#(extra)"sources": [{\#(source)}]}"#
  }

  @Test func test_issue25_everyBelowAMinuteIsRefusedForEveryKind() {
    for kind in ["appRefresh", "processing"] {
      for every in ["0s", "500ms", "59s"] {
        let found = problems(Self.config(#""tasks": [{"id": "t", "kind": "\#(kind)", "every": "\#(every)", "sources": ["a"]}], "#))
        #expect(found.map(\.path) == ["tasks[0].every"], "\(kind) \(every)")
        #expect(found.first?.message.hasPrefix("is \(every); the shortest interval is 1m") == true, "\(found)")
      }
      let ok = try? ForageConfig.parse(Array(Self.config(#""tasks": [{"id": "t", "kind": "\#(kind)", "every": "1m", "sources": ["a"]}], "#).utf8))
      #expect(ok?.tasks.first?.every == .seconds(60))
    }
  }

  @Test func test_issue25_aUserAgentWithALineBreakIsAConfigError() {
    let top = problems(Self.config(#""userAgent": "A\r\nX-Injected: 1", "#))
    #expect(top.map(\.path) == ["userAgent"])
    #expect(top.first?.message.contains("line break") == true, "\(top)")
    let fetch = problems(Self.config(#""fetch": {"userAgent": "A\u001b[2J"}, "#))
    #expect(fetch.map(\.path) == ["fetch.userAgent"])
    #expect(fetch.first?.message.contains("control character") == true, "\(fetch)")
  }

  @Test func test_issue25_badHeaderNamesAndValuesAreConfigErrors_notDropped() {
    let global = problems(Self.config(
      #""fetch": {"headers": {"X-Good": "1", "X-Foo": "a\nX-Injected: 1", "X Bad": "2", "X-Colon:": "3"}}, "#))
    #expect(global.map(\.path).sorted() == ["fetch.headers.X Bad", "fetch.headers.X-Colon:", "fetch.headers.X-Foo"])
    #expect(global.first { $0.path == "fetch.headers.X Bad" }?.message.contains("not a header name") == true)
    // A source's own fetch object, and headersFromEnv names.
    let perSource = problems(
      #"{"sources": [{"name": "a", "url": "https://x.org/"}, {"name": "b", "url": "https://y.org/", "#
        + #""fetch": {"headers": {"X-Nul": "a\u0000b"}, "headersFromEnv": {"X Key": "KEY", "X-Ok": "BAD=NAME"}}}]}"#)
    #expect(perSource.map(\.path).sorted() == [
      "sources[1].fetch.headers.X-Nul", "sources[1].fetch.headersFromEnv.X Key", "sources[1].fetch.headersFromEnv.X-Ok",
    ])
    // Good headers still read.
    let ok = try? ForageConfig.parse(Array(Self.config(#""fetch": {"headers": {"X-Good": "1\t2"}}, "#).utf8))
    #expect(ok?.fetch.headers == ["X-Good": "1\t2"])
  }

  @Test func test_issue25_aConfigThatIsNotUTF8IsRefusedWithItsOffsetAndLine() {
    let bytes = Array("{\"sources\": [{\"name\": \"a\",\n  \"url\": \"https://x.org/".utf8) + [0xFF, 0x41]
      + Array("\"}]}".utf8)
    do {
      _ = try ForageConfig.parse(bytes, file: "bad.json")
      Issue.record("expected the config to be refused")
    } catch {
      #expect(error.problems.count == 1)
      #expect(error.problems.first?.path == "")
      #expect(
        error.problems.first?.message
          == "the file is not valid UTF-8: the bytes at offset 51 (line 2, column 25), starting 0xFF, "
          + "are not a UTF-8 character; save the file as UTF-8", "\(error)")
    }
    // A truncated sequence at the end, too.
    #expect(ForageConfig.invalidUTF8(Array("{}".utf8) + [0xC3]) != nil)
    #expect(ForageConfig.invalidUTF8(Array("{\"é\": \"😀\"}".utf8)) == nil)
  }

  @Test func test_issue25_namesWithControlCharactersAreRefusedWithTheirPath() {
    for (name, what) in [("a\\nb", "a line break"), ("a\\u0000b", "a NUL character"), ("a\\u009bb", "a control character")] {
      let found = problems(
        #"{"tasks": [{"id": "t\#(name)", "sources": ["s"]}], "notify": [{"stdout": true, "name": "c\#(name)"}], "#
          + #""sources": [{"name": "s", "url": "https://x.org/"}, {"name": "\#(name)", "url": "https://y.org/"}]}"#)
      #expect(found.map(\.path).sorted() == ["notify[0].name", "sources[1].name", "tasks[0].id"], "\(name): \(found)")
      #expect(found.allSatisfy { $0.message.hasPrefix("must not hold \(what)") }, "\(found)")
    }
  }
}
