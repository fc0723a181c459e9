import ForageStore
import Testing

@testable import Forage

/// A config with one HTML source ("prices", fields title/price/stock) and one
/// feed source ("news"); `top` adds top-level members, `prices` and `news`
/// members of those sources.
private func config(top: String = "", prices: String = "", news: String = "") -> String {
  """
  {
    \(top.isEmpty ? "" : top + ",")
    "sources": [
      {"name": "prices", "url": "https://example.com/item/1",
       "extract": {"title": "h1", "price": {"css": ".price", "type": "number"}, "stock": ".stock"}
       \(prices.isEmpty ? "" : "," + prices)},
      {"name": "news", "feed": "https://example.com/rss" \(news.isEmpty ? "" : "," + news)}
    ]
  }
  """
}

private func parse(_ json: String) throws -> ForageConfig {
  try ForageConfig.parse(Array(json.utf8))
}

/// The one problem of a config expected to be rejected for exactly one reason.
private func problem(_ json: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigProblem? {
  let found = problems(json)
  #expect(found.count == 1, "\(found)", sourceLocation: sourceLocation)
  return found.first
}

@Suite struct NotifyConfigTests {

  /// Issue 25: a file channel appending to the store or a side file of it.
  @Test func test_issue25_fileChannel_namingTheStoreOrASideFile_isRefused() throws {
    let wal = problem(config(top: #""notify": [{"file": "forage.sqlite-wal"}]"#))
    #expect(wal?.path == "notify[0].file")
    #expect(wal?.message.contains("write-ahead log of a database named forage.sqlite") == true, "\(String(describing: wal))")
    let journal = problem(config(top: #""notify": [{"stdout": true}, {"file": "data/x.db-journal"}]"#))
    #expect(journal?.path == "notify[1].file")
    let store = problem(config(top: #""store": "data/s.sqlite", "notify": [{"file": "./data/s.sqlite"}]"#))
    #expect(store?.path == "notify[0].file")
    #expect(store?.message.contains("is the store") == true)
    let defaultStore = problem(config(top: #""notify": [{"file": "forage.sqlite"}]"#))
    #expect(defaultStore?.path == "notify[0].file")
    let pending = problem(config(top: #""notify": [{"file": "forage.sqlite.pending.json"}]"#))
    #expect(pending?.message.contains("beside the store") == true)
    #expect(throws: Never.self) { try parse(config(top: #""notify": [{"file": "changes.jsonl"}]"#)) }
  }
  static let full = config(
    top: """
      "notify": [
        {"name": "ops", "webhook": "https://hooks.example.com/forage", "secretEnv": "FORAGE_HOOK_SECRET",
         "batch": true, "timeout": "5s", "maxAge": "6h"},
        {"command": ["notify-send", "Forage"]},
        {"file": "changes.jsonl"},
        {"stdout": true}
      ]
      """,
    prices: """
      "notifyWhen": [
        {"field": "price", "decreases": true}, {"field": "price", "increases": true},
        {"field": "price", "below": 20}, {"field": "price", "above": 99.5},
        {"field": "stock", "contains": "in stock"}, {"field": "stock", "matches": "^only \\\\d+ left$"},
        {"field": "stock", "appears": true}, {"field": "stock", "disappears": true},
        {"field": "title", "changes": true}, {"kind": "new"}, {"kind": "removed"}
      ],
      "notifyVia": ["ops", "file"],
      "history": {"keep": 50, "maxAge": "90d"}
      """,
    news: """
      "notifyWhen": [{"kind": "new"}, {"field": "title", "changes": true}],
      "history": {"keep": 10}
      """)

  // MARK: Valid configs

  @Test func test_fullExample_parsesToTheExpectedValues() throws {
    let c = try parse(NotifyConfigTests.full)
    #expect(
      c.notify == [
        NotifyChannel(
          name: "ops", target: .webhook(url: "https://hooks.example.com/forage", secretEnv: "FORAGE_HOOK_SECRET"),
          batch: true, timeout: .seconds(5), maxAge: .seconds(6 * 3600)),
        NotifyChannel(target: .command(["notify-send", "Forage"])),
        NotifyChannel(target: .file("changes.jsonl")),
        NotifyChannel(target: .stdout),
      ])
    #expect(c.notify.map(\.name) == ["ops", "command", "file", "stdout"])
    #expect(c.notify[1].timeout == EngineDefaults.notifyTimeout)
    #expect(c.notify[1].maxAge == EngineDefaults.notifyMaxAge)
    #expect(!c.notify[1].batch)

    let prices = try #require(c.source(named: "prices"))
    #expect(
      prices.notifyWhen == [
        .field("price", .decreases), .field("price", .increases), .field("price", .below(20)),
        .field("price", .above(99.5)), .field("stock", .contains("in stock")),
        .field("stock", .matches(#"^only \d+ left$"#)), .field("stock", .appears), .field("stock", .disappears),
        .field("title", .changes), .kind(.new), .kind(.removed),
      ])
    #expect(prices.notifyVia == ["ops", "file"])
    #expect(prices.history == HistoryRetention(keep: 50, maxAge: .seconds(90 * 86_400)))

    let news = try #require(c.source(named: "news"))
    #expect(news.notifyWhen == [.kind(.new), .field("title", .changes)])
    #expect(news.notifyVia == nil)
    #expect(news.history == HistoryRetention(keep: 10))
  }

  @Test func test_withoutNotifyKeys_theDefaults() throws {
    let c = try parse(config())
    #expect(c.notify.isEmpty)
    for s in c.sources {
      #expect(s.notifyWhen == nil)
      #expect(s.notifyVia == nil)
      #expect(s.history == nil)
    }
  }

  @Test func test_webhookWithoutSecret_andHistoryByAgeOnly() throws {
    let c = try parse(
      config(top: #""notify": [{"webhook": "http://localhost:8080/hook"}]"#, prices: #""history": {"maxAge": "1h"}"#))
    #expect(c.notify == [NotifyChannel(target: .webhook(url: "http://localhost:8080/hook", secretEnv: nil))])
    #expect(c.notify[0].name == "webhook")
    #expect(c.sources[0].history == HistoryRetention(maxAge: .seconds(3600)))
  }

  // MARK: Round trip

  @Test func test_roundTrip_writtenConfigParsesToTheSameValue() throws {
    let c = try parse(NotifyConfigTests.full)
    let text = c.jsonText
    let again = try parse(text)
    #expect(again == c)
    #expect(again.jsonText == text)
    // Defaults are not written.
    #expect(!text.contains("\"name\": \"file\""))
    #expect(!text.contains("\"notifyWhen\": null"))
  }

  @Test func test_roundTrip_configBuiltInCode() throws {
    var source = Source(name: "s", urls: ["https://example.com/"])
    source.fields = [Field(name: "price", rule: "span.price")]
    source.notifyWhen = [.field("price", .below(-2.25)), .field("price", .contains("a \"quoted\" word")), .kind(.restored)]
    source.notifyVia = ["a", "b"]
    source.history = HistoryRetention(keep: 1, maxAge: .seconds(7200))
    var c = ForageConfig(sources: [source])
    c.notify = [
      NotifyChannel(name: "a", target: .stdout, batch: true),
      NotifyChannel(name: "b", target: .command(["/usr/bin/env", "true"]), timeout: .seconds(1), maxAge: .seconds(60)),
    ]
    #expect(try parse(c.jsonText) == c)
  }

  // MARK: Channels

  @Test func test_channel_unknownKey_hasAHint() {
    let p = problem(config(top: #""notify": [{"webhook": "https://h.example.com/", "secretEnvv": "X"}]"#))
    #expect(p?.path == "notify[0].secretEnvv")
    #expect(p?.message.contains("did you mean \"secretEnv\"") == true)
  }

  @Test func test_channel_missingType_namesTheFiveChoices() {
    let p = problem(config(top: #""notify": [{"name": "x"}]"#))
    #expect(p?.path == "notify[0]")
    for word in ["webhook", "command", "file", "stdout", "local"] { #expect(p?.message.contains("\"\(word)\"") == true) }
  }

  @Test func test_channel_twoTypes() {
    let p = problem(config(top: #""notify": [{"file": "a.jsonl", "stdout": true}]"#))
    #expect(p?.path == "notify[0]")
    #expect(p?.message.contains("one type") == true)
  }

  @Test func test_channel_duplicateNames_suggestAddingName() {
    let p = problem(config(top: #""notify": [{"file": "a.jsonl"}, {"file": "b.jsonl"}]"#))
    #expect(p?.path == "notify[1]")
    #expect(p?.message.contains("duplicate channel name \"file\"") == true)
    #expect(p?.message.contains("\"name\"") == true)
    let named = problem(config(top: #""notify": [{"name": "x", "file": "a.jsonl"}, {"name": "x", "stdout": true}]"#))
    #expect(named?.path == "notify[1].name")
    #expect(named?.message.contains("duplicate channel name \"x\"") == true)
    // A name that is another channel's type word is a duplicate too.
    let clash = problem(config(top: #""notify": [{"name": "stdout", "file": "a.jsonl"}, {"stdout": true}]"#))
    #expect(clash?.path == "notify[1]")
  }

  @Test func test_channel_secretEnvOnAFileChannel() {
    let p = problem(config(top: #""notify": [{"file": "a.jsonl", "secretEnv": "SECRET"}]"#))
    #expect(p?.path == "notify[0].secretEnv")
    #expect(p?.message.contains("webhook channels only") == true)
  }

  @Test func test_issue25_commandEnvironment_envAndPassEnv_areReadAndWrittenBack() throws {
    let c = try parse(
      config(
        top: """
          "notify": [{"command": ["post-to-slack"], "env": {"LOG_LEVEL": "info", "EMPTY": ""},
                      "passEnv": ["SLACK_TOKEN", "SLACK_TOKEN", "HOME"]}]
          """))
    #expect(
      c.notify == [
        NotifyChannel(
          target: .command(["post-to-slack"]), env: ["LOG_LEVEL": "info", "EMPTY": ""], passEnv: ["SLACK_TOKEN", "HOME"])
      ])
    let again = try parse(c.jsonText)
    #expect(again == c)
    #expect(c.jsonText.contains(#""passEnv": ["SLACK_TOKEN", "HOME"]"#), "\(c.jsonText)")
  }

  @Test func test_issue25_commandEnvironment_problemsNameTheirPath() {
    let cases: [(String, String, String)] = [
      (#"{"webhook": "https://h.example.com/", "env": {"A": "b"}}"#, "notify[0].env", "command channels only"),
      (#"{"file": "a.jsonl", "passEnv": ["A"]}"#, "notify[0].passEnv", "command channels only"),
      (#"{"command": ["x"], "env": ["A=b"]}"#, "notify[0].env", "expected an object"),
      (#"{"command": ["x"], "env": {"1A": "b"}}"#, "notify[0].env.1A", "environment variable name"),
      (#"{"command": ["x"], "env": {"A-B": "b"}}"#, "notify[0].env.A-B", "environment variable name"),
      (#"{"command": ["x"], "env": {"A": 1}}"#, "notify[0].env.A", "expected a string"),
      (#"{"command": ["x"], "env": {"A": "a\u0000b"}}"#, "notify[0].env.A", "NUL"),
      (#"{"command": ["x"], "env": {"FORAGE_MESSAGE_ID": "m"}}"#, "notify[0].env.FORAGE_MESSAGE_ID", "set by Forage"),
      (#"{"command": ["x"], "passEnv": "TOKEN"}"#, "notify[0].passEnv", "expected an array"),
      (#"{"command": ["x"], "passEnv": ["TOKEN", "MY TOKEN"]}"#, "notify[0].passEnv[1]", "environment variable name"),
      (#"{"command": ["x"], "passEnv": [""]}"#, "notify[0].passEnv[0]", "empty"),
      (#"{"command": ["x"], "passEnv": ["FORAGE_MESSAGE_ID"]}"#, "notify[0].passEnv[0]", "set by Forage"),
      (#"{"command": ["x"], "env": {"T": "1"}, "passEnv": ["T"]}"#, "notify[0].passEnv[0]", "also set in \"env\""),
    ]
    for (channel, path, words) in cases {
      let p = problem(config(top: "\"notify\": [\(channel)]"))
      #expect(p?.path == path, "\(channel)")
      #expect(p?.message.contains(words) == true, "\(channel): \(p?.message ?? "")")
    }
  }

  @Test func test_channel_badValues() {
    let cases: [(String, String, String)] = [
      (#"{"webhook": "ftp://example.com/"}"#, "notify[0].webhook", "http(s)"),
      (#"{"webhook": "/hook"}"#, "notify[0].webhook", "http(s)"),
      (#"{"webhook": "https://h.example.com/", "secretEnv": "1SECRET"}"#, "notify[0].secretEnv", "environment variable"),
      (#"{"webhook": "https://h.example.com/", "secretEnv": "MY-SECRET"}"#, "notify[0].secretEnv", "environment variable"),
      (#"{"command": "notify-send Forage"}"#, "notify[0].command", "array"),
      (#"{"command": []}"#, "notify[0].command", "empty"),
      (#"{"command": ["notify-send", ""]}"#, "notify[0].command[1]", "empty"),
      (#"{"file": ""}"#, "notify[0].file", "empty"),
      (#"{"stdout": false}"#, "notify[0].stdout", "must be true"),
      (#"{"stdout": true, "name": ""}"#, "notify[0].name", "empty"),
      (#"{"stdout": true, "batch": "yes"}"#, "notify[0].batch", "true or false"),
      (#"{"stdout": true, "timeout": "500ms"}"#, "notify[0].timeout", "at least 1s"),
      (#"{"stdout": true, "maxAge": "30s"}"#, "notify[0].maxAge", "at least 1m"),
      (#"{"stdout": true, "timeout": "soon"}"#, "notify[0].timeout", "duration"),
      ("\"stdout\"", "notify[0]", "expected an object"),
    ]
    for (channel, path, words) in cases {
      let p = problem(config(top: "\"notify\": [\(channel)]"))
      #expect(p?.path == path, "\(channel)")
      #expect(p?.message.contains(words) == true, "\(channel): \(p?.message ?? "")")
    }
    #expect(problem(config(top: #""notify": {"stdout": true}"#))?.path == "notify")
  }

  // MARK: notifyWhen

  @Test func test_condition_unknownKey_hasAHint() {
    // The unknown key, and the missing test it was meant to be.
    let all = problems(config(prices: #""notifyWhen": [{"field": "price", "belwo": 20}]"#))
    #expect(all.contains { $0.path == "sources[0].notifyWhen[0].belwo" && $0.message.contains("did you mean \"below\"") })
    #expect(all.count == 2)
  }

  @Test func test_condition_unknownField_hasAHint() {
    let p = problem(config(prices: #""notifyWhen": [{"field": "prcie", "decreases": true}]"#))
    #expect(p?.path == "sources[0].notifyWhen[0].field")
    #expect(p?.message.contains("no field named \"prcie\"") == true)
    #expect(p?.message.contains("did you mean \"price\"") == true)
  }

  @Test func test_condition_feedFields() throws {
    let p = problem(config(news: #""notifyWhen": [{"field": "titel", "changes": true}]"#))
    #expect(p?.path == "sources[1].notifyWhen[0].field")
    #expect(p?.message.contains("did you mean \"title\"") == true)
    let c = try parse(config(news: #""notifyWhen": [{"field": "enclosures", "appears": true}]"#))
    #expect(c.sources[1].notifyWhen == [.field("enclosures", .appears)])
  }

  @Test func test_condition_badRegex() {
    let p = problem(config(prices: #""notifyWhen": [{"field": "stock", "matches": "(unclosed"}]"#))
    #expect(p?.path == "sources[0].notifyWhen[0].matches")
    #expect(p?.message.contains("invalid regular expression") == true)
  }

  @Test func test_condition_falseTest_isAProblem() {
    let p = problem(config(prices: #""notifyWhen": [{"field": "price", "increases": false}]"#))
    #expect(p?.path == "sources[0].notifyWhen[0].increases")
    #expect(p?.message.contains("must be true") == true)
  }

  @Test func test_condition_badShapes() {
    let cases: [(String, String, String)] = [
      (#"{"field": "price"}"#, "sources[0].notifyWhen[0]", "one test"),
      (#"{"field": "price", "below": 20, "above": 30}"#, "sources[0].notifyWhen[0].above", "one test per condition"),
      (#"{"below": 20}"#, "sources[0].notifyWhen[0].field", "missing"),
      (#"{}"#, "sources[0].notifyWhen[0]", "\"kind\" or \"field\""),
      (#"{"kind": "changd"}"#, "sources[0].notifyWhen[0].kind", "did you mean \"changed\""),
      (#"{"kind": "new", "field": "price"}"#, "sources[0].notifyWhen[0].field", "stands alone"),
      (#"{"kind": "changed", "changes": true}"#, "sources[0].notifyWhen[0].changes", "stands alone"),
      (#"{"field": "price", "below": "20"}"#, "sources[0].notifyWhen[0].below", "expected a number"),
      (#"{"field": "stock", "contains": ""}"#, "sources[0].notifyWhen[0].contains", "empty"),
      (#"{"field": "stock", "appears": 1}"#, "sources[0].notifyWhen[0].appears", "true or false"),
      (#"{"field": 3, "changes": true}"#, "sources[0].notifyWhen[0].field", "expected a string"),
      (#""price""#, "sources[0].notifyWhen[0]", "expected an object"),
    ]
    for (condition, path, words) in cases {
      let p = problem(config(prices: "\"notifyWhen\": [\(condition)]"))
      #expect(p?.path == path, "\(condition)")
      #expect(p?.message.contains(words) == true, "\(condition): \(p?.message ?? "")")
    }
  }

  @Test func test_notifyWhen_emptyOrNotAList() {
    let p = problem(config(prices: #""notifyWhen": []"#))
    #expect(p?.path == "sources[0].notifyWhen")
    #expect(p?.message.contains("never notify") == true)
    #expect(p?.message.contains("remove notifyWhen") == true)
    #expect(problem(config(prices: #""notifyWhen": {"kind": "new"}"#))?.path == "sources[0].notifyWhen")
  }

  // MARK: notifyVia

  @Test func test_notifyVia_unknownChannel_hasAHint() {
    let p = problem(
      config(top: #""notify": [{"name": "ops", "stdout": true}]"#, news: #""notifyVia": ["ops", "opz"]"#))
    #expect(p?.path == "sources[1].notifyVia[1]")
    #expect(p?.message.contains("no channel named \"opz\"") == true)
    #expect(p?.message.contains("did you mean \"ops\"") == true)
  }

  @Test func test_notifyVia_withoutNotify_saysSo() {
    let p = problem(config(prices: #""notifyVia": ["ops"]"#))
    #expect(p?.path == "sources[0].notifyVia[0]")
    #expect(p?.message.contains("no \"notify\"") == true)
  }

  @Test func test_notifyVia_unnamedChannelsAreCalledByTheirType_andAnEmptyListIsAProblem() throws {
    let c = try parse(config(top: #""notify": [{"stdout": true}]"#, prices: #""notifyVia": ["stdout"]"#))
    #expect(c.sources[0].notifyVia == ["stdout"])
    let p = problem(config(top: #""notify": [{"stdout": true}]"#, prices: #""notifyVia": []"#))
    #expect(p?.path == "sources[0].notifyVia")
    #expect(p?.message.contains("at least one channel") == true)
  }

  @Test func test_notifyVia_aChannelWithItsOwnProblem_isNotReportedAgain() {
    let p = problem(
      config(top: #""notify": [{"name": "ops", "stdout": true, "timeout": "1ms"}]"#, prices: #""notifyVia": ["ops"]"#))
    #expect(p?.path == "notify[0].timeout")
  }

  // MARK: history

  @Test func test_history_problems() {
    let cases: [(String, String, String)] = [
      (#"{}"#, "sources[0].history", "\"keep\""),
      (#"{"keep": 0}"#, "sources[0].history.keep", "at least 1"),
      (#"{"keep": 2.5}"#, "sources[0].history.keep", "whole number"),
      (#"{"maxAge": "30m"}"#, "sources[0].history.maxAge", "at least 1h"),
      (#"{"kept": 5}"#, "sources[0].history.kept", "did you mean \"keep\""),
    ]
    for (history, path, words) in cases {
      let found = problems(config(prices: "\"history\": \(history)"))
      #expect(found.contains { $0.path == path && $0.message.contains(words) }, "\(history): \(found)")
    }
  }

  @Test func test_unknownSourceKey_suggestsANotifyKey() {
    let p = problem(config(prices: #""notifyVai": ["ops"]"#))
    #expect(p?.path == "sources[0].notifyVai")
    #expect(p?.message.contains("did you mean \"notifyVia\"") == true)
    let top = problem(config(top: #""notfy": []"#))
    #expect(top?.message.contains("did you mean \"notify\"") == true)
  }
}
