import Testing
@testable import Forage

/// Parses config text, expecting failure, and returns the problems.
func problems(_ json: String) -> [ConfigProblem] {
  do {
    _ = try ForageConfig.parse(Array(json.utf8), file: "test.json")
    Issue.record("expected the config to be rejected")
    return []
  } catch {
    return error.problems
  }
}

@Suite struct ConfigTests {
  static let valid = """
    {
      "userAgent": "ExampleBot/1.0 (+https://example.com/bot)",
      "store": "forage.sqlite",
      "fetch": {"concurrency": 16, "perHostConcurrency": 2, "perHostDelay": "500ms",
                "timeout": "15s", "maxBodySize": "10MiB", "robotsTxt": true},
      "tasks": [
        {"id": "com.example.refresh", "kind": "appRefresh", "every": "15m", "budget": "30s",
         "sources": ["prices"]},
        {"id": "com.example.crawl", "kind": "processing", "every": "6h", "budget": "5m",
         "requiresNetwork": true, "requiresExternalPower": false, "sources": ["catalog"]}
      ],
      "sources": [
        {"name": "prices", "url": "https://example.com/item/1",
         "extract": {"title": "h1", "price": {"css": ".price", "type": "number"}}, "critical": true},
        {"name": "catalog", "url": "https://example.com/",
         "crawl": {"follow": "a[href]", "sameHost": true, "maxDepth": 5, "maxPages": 50000},
         "match": "div.product",
         "extract": {"title": "h1.product-title", "price": "span.price",
                     "sku": {"css": "div.product", "attr": "data-sku"}},
         "fetch": {"robotsTxt": false, "perHostConcurrency": 16, "perHostDelay": "0s"}}
      ]
    }
    """

  @Test func test_parse_architectureExample() throws {
    let c = try ForageConfig.parse(Array(ConfigTests.valid.utf8))
    #expect(c.fetch.userAgent == "ExampleBot/1.0 (+https://example.com/bot)")
    #expect(c.fetch.perHostDelay == .milliseconds(500))
    #expect(c.fetch.maxBodySize == 10 * 1024 * 1024)
    #expect(c.tasks.map(\.id) == ["com.example.refresh", "com.example.crawl"])
    #expect(c.tasks[1].kind == .processing)
    #expect(c.tasks[1].every == .seconds(6 * 3600))
    #expect(c.tasks[0].budget == .seconds(30))
    let prices = try #require(c.source(named: "prices"))
    #expect(prices.critical)
    #expect(prices.fields.map(\.name) == ["title", "price"])
    #expect(prices.fields[1].rule.type == .number)
    let catalog = try #require(c.source(named: "catalog"))
    #expect(catalog.crawl?.maxPages == 50000)
    #expect(catalog.fields.map(\.name) == ["title", "price", "sku"])
    #expect(catalog.fields[2].rule.attr == "data-sku")
    #expect(catalog.match == "div.product")
  }

  @Test func test_fetchOptions_sourceOverridesConfig() throws {
    let c = try ForageConfig.parse(Array(ConfigTests.valid.utf8))
    let o = c.fetchSettings(for: try #require(c.source(named: "catalog")))
    #expect(o.robotsTxt == false)
    #expect(o.perHostConcurrency == 16)
    #expect(o.perHostDelay == .zero)
    #expect(o.concurrency == 16)
    #expect(o.userAgent == "ExampleBot/1.0 (+https://example.com/bot)")
    let p = c.fetchSettings(for: try #require(c.source(named: "prices")))
    #expect(p.robotsTxt == true)
    #expect(p.perHostDelay == .milliseconds(500))
  }

  @Test func test_roundTrip_writtenConfigParsesToTheSameValue() throws {
    let c = try ForageConfig.parse(Array(ConfigTests.valid.utf8))
    let again = try ForageConfig.parse(Array(c.jsonText.utf8))
    #expect(again == c)
  }

  @Test func test_badSelector_namesPathAndPosition() {
    let p = problems(#"{"sources": [{"name": "a", "url": "https://x.org/"}, {"name": "b", "url": "https://x.org/"}, {"name": "c", "url": "https://x.org/", "extract": {"price": {"css": "div[data-x"}}}]}"#)
    #expect(p.count == 1)
    #expect(p.first?.path == "sources[2].extract.price.css")
    #expect(p.first?.message.contains("character") == true)
  }

  @Test func test_unknownKey_suggestsClosest() {
    let p = problems(#"{"sources": [{"name": "a", "url": "https://x.org/", "extarct": {}}]}"#)
    #expect(p.map(\.description) == [#"sources[0].extarct: unknown key "extarct" (did you mean "extract"?)"#])
  }

  @Test func test_badDuration_namesPath() {
    let p = problems(#"{"tasks": [{"id": "t", "every": "15 minutes", "sources": ["a"]}], "sources": [{"name": "a", "url": "https://x.org/"}]}"#)
    #expect(p.map(\.path) == ["tasks[0].every"])
    #expect(p.first?.message.contains("15m") == true)
  }

  @Test func test_everyProblemIsReported() {
    let p = problems(#"{"fetch": {"timeout": "soon", "concurency": 3}, "sources": [{"url": "ftp://x.org/"}]}"#)
    let paths = Set(p.map(\.path))
    #expect(paths == ["fetch.timeout", "fetch.concurency", "sources[0].name", "sources[0].url"])
    #expect(p.first { $0.path == "fetch.concurency" }?.message.contains("concurrency") == true)
  }

  @Test func test_taskNamingUnknownSource() {
    let p = problems(#"{"tasks": [{"id": "t", "sources": ["prics"]}], "sources": [{"name": "prices", "url": "https://x.org/"}]}"#)
    #expect(p.map(\.description) == [#"tasks[0].sources[0]: no source named "prics" (did you mean "prices"?)"#])
  }

  @Test func test_keyMustNameAField() {
    let p = problems(#"{"sources": [{"name": "a", "url": "https://x.org/", "extract": {"sku": "b"}, "key": ["skus"]}]}"#)
    #expect(p.map(\.path) == ["sources[0].key[0]"])
  }

  @Test func test_jsonSource_takesPointersNotSelectors() throws {
    let ok = try ForageConfig.parse(Array(#"{"sources": [{"name": "api", "url": "https://x.org/a.json", "format": "json", "items": "/data/items", "extract": {"id": {"pointer": "/id", "type": "integer"}, "name": "/name"}}]}"#.utf8))
    #expect(ok.sources[0].format == .json)
    let p = problems(#"{"sources": [{"name": "api", "url": "https://x.org/a.json", "format": "json", "extract": {"id": "id", "x": {"css": "p"}}}]}"#)
    #expect(Set(p.map(\.path)) == ["sources[0].extract.id", "sources[0].extract.x.css", "sources[0].extract.x.pointer"])
  }

  @Test func test_syntaxError_namesLineAndColumn() {
    let p = problems("{\n  \"sources\": [,]\n}")
    #expect(p.count == 1)
    #expect(p.first?.message.contains("line 2, column 15") == true)
  }

  @Test func test_duplicateNames() {
    let p = problems(#"{"sources": [{"name": "a", "url": "https://x.org/"}, {"name": "a", "url": "https://y.org/"}]}"#)
    #expect(p.map(\.description) == [#"sources[1].name: duplicate source name "a""#])
  }

  @Test func test_issue8_byteOrderMark_isSkipped() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    let c = try ForageConfig.parse(bom + Array(ConfigTests.valid.utf8))
    #expect(c == (try ForageConfig.parse(Array(ConfigTests.valid.utf8))))
    // Positions count from the text, not from the mark.
    let p = problems(String(decoding: bom, as: UTF8.self) + "{\"sources\": [,]}")
    #expect(p.map(\.message) == ["not valid JSON: line 1, column 14: unexpected character ',', expected a value"])
  }

  @Test func test_issue8_wholeNumbers_sayWhatIsWrong() {
    func sources(maxDepth: String) -> String {
      #""sources": [{"name": "a", "url": "https://x.org/", "crawl": {"maxDepth": "# + maxDepth + #", "maxPages": 0}}]"#
    }
    let p = problems(#"{"fetch": {"concurrency": 1e300, "perHostConcurrency": 1e20, "retries": -1, "#
      + #""maxBodySize": -5}, "# + sources(maxDepth: "2.5") + "}")
    #expect(p.map(\.description) == [
      "fetch.concurrency: 1e+300 is too large; it must be at most 9007199254740991",
      "fetch.perHostConcurrency: 1e+20 is too large; it must be at most 9007199254740991",
      #"fetch.maxBodySize: -5 is negative; it must be 0 or more (a size in bytes, or text such as "512KiB" or "10MiB")"#,
      "fetch.retries: -1 is negative; it must be 0 or more",
      "sources[0].crawl.maxDepth: 2.5 is not a whole number",
      "sources[0].crawl.maxPages: 0 is too small; it must be at least 1",
    ])
    let q = problems(#"{"fetch": {"concurrency": "16"}, "# + sources(maxDepth: "2") + "}")
    #expect(q.map(\.description) == [
      #"fetch.concurrency: expected a whole number, found "16""#,
      "sources[0].crawl.maxPages: 0 is too small; it must be at least 1",
    ])
  }

  @Test func test_issue8_noSources_isAProblem() {
    #expect(problems(#"{"sources": []}"#).map(\.description) == ["sources: the config has no sources; add at least one"])
    #expect(problems(#"{"userAgent": "x"}"#).map(\.description)
      == [#"sources: missing: the config has no sources; add a "sources" array with at least one"#])
  }

  @Test func test_missingFile_isAClearError() {
    #expect(throws: ConfigError.self) { try ForageConfig.load(path: "/nonexistent/forage.json") }
    do { _ = try ForageConfig.load(path: "/nonexistent/forage.json") } catch {
      #expect(error.description.contains("/nonexistent/forage.json"))
      #expect(error.description.contains("no such file"))
    }
  }
}

/// Configs written as JSON text (`jsonText`, `JSONValue.pretty`).
@Suite struct ConfigWriterTests {
  /// Found with the JSON fuzzer's round-trip check: a short array of strings
  /// was written on one line by replacing `","` with `", "` in its text, which
  /// also hit a string ending in an escaped quote and a comma (`x",`).
  @Test func test_pretty_shortStringArray_readsBackEqual() throws {
    let value = JSONValue.array([.string("x\","), .string("y"), .string("\",\"")])
    #expect(try JSONValue.parse(value.pretty()) == value)
    #expect(JSONValue.array([.string("a"), .string("b")]).pretty() == #"["a", "b"]"#)
    let config = try ForageConfig.parse(Array(#"""
      {"removeQueryParameters": ["utm_*", "a\",", "b"],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """#.utf8))
    let again = try ForageConfig.parse(Array(config.jsonText.utf8))
    #expect(again.removeQueryParameters == ["utm_*", "a\",", "b"])
  }
}

@Suite struct UnitsTests {
  @Test func test_durations() {
    #expect(Units.duration("500ms") == .milliseconds(500))
    #expect(Units.duration("30s") == .seconds(30))
    #expect(Units.duration("15m") == .seconds(900))
    #expect(Units.duration("6h") == .seconds(21600))
    #expect(Units.duration("1d") == .seconds(86400))
    #expect(Units.duration("1.5s") == .milliseconds(1500))
    #expect(Units.duration("15") == nil)
    #expect(Units.duration("-3s") == nil)
    #expect(Units.duration("s") == nil)
  }

  @Test func test_outOfRange_isNotANumberNotACrash() {
    #expect(Units.duration("1e300s") == nil)
    #expect(Units.duration("1e20s") == nil)
    #expect(Units.size("1e300KiB") == nil)
    let p = problems(#"{"fetch": {"maxBodySize": 1e300, "timeout": "1e300s"}, "sources": [{"name": "a", "url": "https://x.org/"}]}"#)
    #expect(Set(p.map(\.path)) == ["fetch.maxBodySize", "fetch.timeout"])
  }

  @Test func test_sizes() {
    #expect(Units.size("512KiB") == 512 * 1024)
    #expect(Units.size("10MiB") == 10 * 1024 * 1024)
    #expect(Units.size("2GB") == 2_000_000_000)
    #expect(Units.size("4096") == 4096)
    #expect(Units.size("ten") == nil)
  }

  /// A page is read whole to be parsed: a body limit past 1 GiB is refused,
  /// on the config's fetch settings and on a source's.
  @Test func test_maxBodySize_pastOneGiB_isRefused() throws {
    let limit = try ForageConfig.parse(
      Array(#"{"fetch": {"maxBodySize": "1GiB"}, "sources": [{"name": "a", "url": "https://x.org/"}]}"#.utf8), file: "t.json")
    #expect(limit.fetch.maxBodySize == 1 << 30)
    let p = problems(
      #"{"fetch": {"maxBodySize": "3GiB"}, "sources": [{"name": "a", "url": "https://x.org/", "fetch": {"maxBodySize": "2GB"}}]}"#)
    #expect(p.map(\.path) == ["fetch.maxBodySize", "sources[0].fetch.maxBodySize"], "\(p)")
    #expect(p.first?.message.contains("at most 1GiB (3 GiB given)") == true, "\(p)")
  }

  @Test func test_formatBytes() {
    #expect(Units.formatBytes(512) == "512 B")
    #expect(Units.formatBytes(12_595) == "12.3 KiB")
    #expect(Units.formatBytes(1 << 30) == "1 GiB")
  }

  /// Found by the units fuzzer: 119986ms was written "120s", which reads back
  /// as 120 s and is then written "2m": a config written twice differed.
  @Test func test_format_ofAValueRoundingUpToTheNextUnit_usesThatUnit() {
    #expect(Units.format(.milliseconds(119_986)) == "2m")
    #expect(Units.format(.milliseconds(7_199_999)) == "2h")
    #expect(Units.format(.microseconds(999_700)) == "1s")
    #expect(Units.format(.milliseconds(119_900)) == "119.9s")
    for ms: Int64 in [999, 1_000, 119_949, 119_950, 119_986, 7_196_999, 7_197_000, 7_199_999, 86_400_000] {
      let text = Units.format(.milliseconds(ms))
      #expect(Units.format(Units.duration(text)!) == text, "\(ms) ms written \(text)")
    }
  }

  @Test func test_format_roundTrips() {
    for text in ["500ms", "30s", "15m", "6h"] {
      #expect(Units.format(Units.duration(text)!) == text)
    }
  }
}
