import Foundation
import ForageTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `forage changes`, `forage notify` and the delivery of notifications
/// during `forage run`, through the executable: change history, signed
/// webhooks, retries with a stable id, a kill between sending and marking,
/// a hanging receiver held to the budget, test notifications, and the file
/// and command channels.
@Suite struct NotificationCommandTests {
  /// The items page of a shop whose prices a test changes between runs.
  final class Catalogue: @unchecked Sendable {  // `items` is guarded by `lock`
    private let lock = NSLock()
    private var items: [(name: String, price: Int)]

    init(_ items: [(name: String, price: Int)]) { self.items = items }

    /// Sets an item's price; nil drops it from the page.
    func set(_ name: String, price: Int?) {
      lock.lock()
      defer { lock.unlock() }
      if let price {
        if let i = items.firstIndex(where: { $0.name == name }) { items[i].price = price } else { items.append((name, price)) }
      } else {
        items.removeAll { $0.name == name }
      }
    }

    var html: String {
      lock.lock()
      defer { lock.unlock() }
      let rows = items.map { #"<li class="item"><span class="name">\#($0.name)</span> <span class="price">$\#($0.price)</span></li>"# }
      return "<html><head><title>Shop</title></head><body><ul>\(rows.joined())</ul></body></html>"
    }
  }

  /// A shop on a loopback server, a config in a temporary folder pointing at
  /// it with `notify` channels, and the store beside the config.
  struct Fixture {
    let catalogue: Catalogue
    let server: TestServer
    let dir: TemporaryDirectory
    let config: String
    var store: String { dir.file("s.sqlite") }

    /// - Parameter notify: the JSON text of the config's `notify` array.
    init(notify: String, items: [(name: String, price: Int)] = [("lamp", 12), ("chair", 30), ("desk", 50)]) throws {
      let catalogue = Catalogue(items)
      self.catalogue = catalogue
      server = try TestServer(routes: ["/items": Route { _ in .html(catalogue.html) }])
      dir = TemporaryDirectory()
      config = try dir.write(
        "forage.json",
        """
        {"store": "s.sqlite", "notify": \(notify),
         "sources": [{"name": "items", "url": "\(server.url("/items"))", "items": ".item",
                      "extract": {"name": ".name", "price": {"css": ".price", "type": "number"}},
                      "key": ["name"], "fetch": {"robotsTxt": false, "perHostDelay": "0s"}}]}
        """)
    }

    /// `forage run` of the config, checked to succeed.
    @discardableResult
    func run(budget: String = "60s", environment: [String: String] = [:]) throws -> CommandResult {
      let result = try runForage(["run", "--config", config, "--budget", budget], environment: environment)
      #expect(result.status == 0, "forage run: \(result.stderr)")
      return result
    }

    /// The first run (every record new, nothing notable), then the lamp's
    /// price goes from 12 to 10: the next run finds one notable change.
    func firstRunThenCutThePrice(environment: [String: String] = [:]) throws {
      let first = try run(environment: environment)
      #expect(first.stdout.contains("records: 3 new"), "\(first.stdout)")
      #expect(!first.stdout.contains("notifications:"), "the first crawl's new records are not notable: \(first.stdout)")
      catalogue.set("lamp", price: 10)
    }

    func stop() { server.stop() }
  }

  static func jsonObject(_ text: some StringProtocol) -> [String: Any]? {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
  }

  /// Whether `changes` (a JSON array) is exactly one change of the price from 12 to 10.
  static func isPriceCut(_ changes: Any?) -> Bool {
    guard let list = changes as? [[String: Any]], list.count == 1 else { return false }
    return list[0]["field"] as? String == "price" && (list[0]["before"] as? NSNumber)?.doubleValue == 12
      && (list[0]["after"] as? NSNumber)?.doubleValue == 10
  }

  /// Polls `condition` every 20 ms for up to `seconds`.
  static func eventually(within seconds: Double = 60, _ condition: () -> Bool) async throws -> Bool {
    let start = Date()
    while !condition() {
      if Date().timeIntervalSince(start) > seconds { return false }
      try await Task.sleep(for: .milliseconds(20))
    }
    return true
  }

  // MARK: 1. forage changes

  @Test func test_changes_listsChangedAndRemoved_newestFirst_filters_andRefusesBadInput() throws {
    let shop = try Fixture(notify: "[]")
    defer { shop.stop() }
    try shop.run()
    shop.catalogue.set("lamp", price: 10)
    shop.catalogue.set("chair", price: nil)
    let second = try shop.run()
    #expect(second.stdout.contains("1 changed"), "\(second.stdout)")
    #expect(second.stdout.contains("1 removed"), "\(second.stdout)")

    // Readable: a heading per change, the changed field below it, newest first.
    let text = try runForage(["changes", "--store", shop.store])
    #expect(text.status == 0, "\(text.stderr)")
    let lines = text.stdout.split(separator: "\n").map(String.init)
    let headings = lines.filter { !$0.hasPrefix(" ") }
    #expect(headings.count == 5, "3 new, 1 changed, 1 removed: \(text.stdout)")
    let changed = lines.firstIndex { $0.contains("  changed  items  lamp") }
    let removed = lines.firstIndex { $0.contains("  removed  items  chair") }
    let firstNew = lines.firstIndex { $0.contains("  new  items  ") }
    #expect(changed != nil && removed != nil && firstNew != nil, "\(text.stdout)")
    if let changed, let removed, let firstNew {
      #expect(removed < changed, "the removal (end of the second crawl) is the newest: \(text.stdout)")
      #expect(changed < firstNew, "the second run's changes come before the first run's: \(text.stdout)")
      #expect(lines[changed + 1] == "  price: 12 → 10", "\(text.stdout)")
      #expect(!lines[(changed + 1)...].prefix { $0.hasPrefix(" ") }.contains { $0.contains("name:") },
              "only the changed field is listed: \(text.stdout)")
    }

    // JSON Lines: one object per line.
    let json = try runForage(["changes", "--store", shop.store, "--json"])
    #expect(json.status == 0, "\(json.stderr)")
    let rows = json.stdout.split(separator: "\n").map { Self.jsonObject($0) }
    #expect(rows.count == 5 && rows.allSatisfy { $0 != nil }, "\(json.stdout)")
    let objects = rows.compactMap { $0 }
    #expect(objects.map { $0["kind"] as? String } == ["removed", "changed", "new", "new", "new"], "\(json.stdout)")
    #expect(objects.allSatisfy { $0["source"] as? String == "items" })
    #expect(objects.first?["key"] as? String == "chair")
    #expect(objects.dropFirst().first?["key"] as? String == "lamp")
    #expect(Self.isPriceCut(objects.dropFirst().first?["changes"]), "\(json.stdout)")

    // --kind filters.
    let onlyChanged = try runForage(["changes", "--store", shop.store, "--kind", "changed", "--json"])
    #expect(onlyChanged.status == 0, "\(onlyChanged.stderr)")
    let kinds = onlyChanged.stdout.split(separator: "\n").map { Self.jsonObject($0)?["kind"] as? String }
    #expect(kinds == ["changed"], "\(onlyChanged.stdout)")
    let onlyChangedText = try runForage(["changes", "--store", shop.store, "--kind", "changed"])
    #expect(onlyChangedText.stdout.contains("  changed  items  lamp"))
    #expect(!onlyChangedText.stdout.contains("removed") && !onlyChangedText.stdout.contains("  new  "),
            "\(onlyChangedText.stdout)")

    // Bad input: exit 2 with a hint, nothing created.
    let typo = try runForage(["changes", "--store", shop.store, "--kind", "chnged"])
    #expect(typo.status == 2)
    #expect(typo.stderr.contains(#"did you mean "changed""#), "\(typo.stderr)")
    let unknownSource = try runForage(["changes", "--store", shop.store, "--source", "nope"])
    #expect(unknownSource.status == 2)
    #expect(unknownSource.stderr.contains("nope"), "\(unknownSource.stderr)")
    let missing = shop.dir.file("missing.sqlite")
    let noStore = try runForage(["changes", "--store", missing])
    #expect(noStore.status == 2)
    #expect(noStore.stderr.contains(missing), "\(noStore.stderr)")
    #expect(!FileManager.default.fileExists(atPath: missing), "forage changes created a store")
  }

  // MARK: 2. Signed webhook

  /// Computes the Standard Webhooks signature in Python (an implementation
  /// independent of Forage's HMAC): the secret, id and timestamp in the
  /// environment, the body on stdin.
  static func pythonSignature(secret: String, id: String, timestamp: String, body: [UInt8]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = [
      "-c",
      """
      import base64, hashlib, hmac, os, sys
      key = base64.b64decode(os.environ["SECRET"][len("whsec_"):])
      message = (os.environ["MSG_ID"] + "." + os.environ["MSG_TS"] + ".").encode() + sys.stdin.buffer.read()
      sys.stdout.write("v1," + base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode())
      """,
    ]
    p.environment = ["SECRET": secret, "MSG_ID": id, "MSG_TS": timestamp]
    let input = Pipe(), output = Pipe()
    p.standardInput = input
    p.standardOutput = output
    try p.run()
    input.fileHandleForWriting.write(Data(body))
    try input.fileHandleForWriting.close()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: out, as: UTF8.self)
  }

  @Test func test_run_deliversASignedWebhook_thatVerifiesIndependently_andTheSecretIsNeverWrittenDown() async throws {
    let receiver = try WebhookReceiver()
    defer { receiver.stop() }
    let key = (0..<24).map { _ in UInt8.random(in: 0...255) }
    let encodedKey = Data(key).base64EncodedString()
    let secret = "whsec_" + encodedKey
    let environment = ["FORAGE_HOOK_SECRET": secret]
    let shop = try Fixture(notify: #"[{"name": "hook", "webhook": "\#(receiver.url)", "secretEnv": "FORAGE_HOOK_SECRET"}]"#)
    defer { shop.stop() }
    var outputs: [String] = []

    try shop.firstRunThenCutThePrice(environment: environment)
    let second = try shop.run(environment: environment)
    outputs += [second.stdout, second.stderr]
    #expect(second.stdout.contains("notifications: 1 queued, 1 delivered"), "\(second.stdout)")

    let deliveries = receiver.deliveries
    try #require(deliveries.count == 1, "\(deliveries.map(\.text))")
    let delivery = deliveries[0]
    let body = try #require(Self.jsonObject(delivery.text), "\(delivery.text)")
    #expect(body["type"] as? String == "record.changed")
    #expect(body["id"] as? String == delivery.id, "the body's id is the webhook-id")
    #expect(body["source"] as? String == "items")
    #expect(body["key"] as? String == "lamp")
    #expect(Self.isPriceCut(body["changes"]), "\(delivery.text)")
    #expect(delivery.contentType?.hasPrefix("application/json") == true)

    let id = try #require(delivery.id), timestamp = try #require(delivery.timestamp)
    let signature = try #require(delivery.signature)
    #expect(signature.hasPrefix("v1,"))
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") {
      let expected = try Self.pythonSignature(secret: secret, id: id, timestamp: timestamp, body: delivery.body)
      #expect(expected.hasPrefix("v1,") && expected.count > 10, "python3 failed: \(expected)")
      #expect(signature == expected)
      // The check can fail: another body does not verify.
      let other = try Self.pythonSignature(secret: secret, id: id, timestamp: timestamp, body: delivery.body + [0x20])
      #expect(signature != other)
    } else {
      // No python3 on this machine: the independent check of the signature
      // is skipped (the rest of the test still runs).
    }

    // A test notification through the channel is signed too, with the same key.
    let test = try runForage(["notify", "--config", shop.config, "--test", "hook"], environment: environment)
    outputs += [test.stdout, test.stderr]
    #expect(test.status == 0, "\(test.stderr)")
    #expect(receiver.deliveries.count == 2)

    // The secret never shows: not in what forage printed, not in the store.
    for text in outputs {
      #expect(!text.contains(encodedKey), "the secret was printed: \(text)")
    }
    var storeFiles = 0
    for suffix in ["", "-wal", "-shm", "-journal"] {
      guard let bytes = FileManager.default.contents(atPath: shop.store + suffix) else { continue }
      storeFiles += 1
      #expect(bytes.range(of: Data(encodedKey.utf8)) == nil, "the secret (base64) is in s.sqlite\(suffix)")
      #expect(bytes.range(of: Data(key)) == nil, "the secret (raw key) is in s.sqlite\(suffix)")
      #expect(bytes.range(of: Data("whsec_".utf8)) == nil, "a whsec_ value is in s.sqlite\(suffix)")
    }
    #expect(storeFiles >= 1, "no store file at \(shop.store)")
  }

  // MARK: 3. Retry with the same id

  @Test func test_failedAttempt_staysPending_andNotifyWaitRetriesWithTheSameID() async throws {
    let receiver = try WebhookReceiver(script: [.fail(status: 500)], then: .accept)
    defer { receiver.stop() }
    let shop = try Fixture(notify: #"[{"name": "hook", "webhook": "\#(receiver.url)"}]"#)
    defer { shop.stop() }
    try shop.firstRunThenCutThePrice()
    let second = try shop.run()
    #expect(second.stdout.contains("notifications: 1 queued, 0 delivered, 1 attempts failed"), "\(second.stdout)")
    #expect(receiver.deliveries.count == 1)

    // Not due yet (the first retry waits 15-30 s): nothing is attempted, and
    // the summary says one is pending. The exit status is 0 as documented in
    // docs/cli.md ("0 everything due was delivered").
    let now = try runForage(["notify", "--config", shop.config])
    #expect(now.status == 0, "\(now.stderr)")
    #expect(now.stderr.contains("delivered 0, failed 0, dead 0; 1 pending (next attempt in "), "\(now.stderr)")
    #expect(receiver.deliveries.count == 1, "a retry went before its backoff passed")
    let counts = try runForage(["notify", "--config", shop.config, "--json"])
    #expect((Self.jsonObject(counts.stdout)?["pending"] as? NSNumber)?.intValue == 1, "\(counts.stdout)")

    // --wait waits for the backoff, then delivers.
    let started = Date()
    let waited = try runForage(["notify", "--config", shop.config, "--wait", "2m"])
    #expect(waited.status == 0, "\(waited.stderr)")
    #expect(waited.stderr.contains("delivered 1, failed 0, dead 0; 0 pending"), "\(waited.stderr)")
    #expect(Date().timeIntervalSince(started) < 100, "--wait 2m did not return after the delivery")

    let deliveries = receiver.deliveries
    try #require(deliveries.count == 2, "\(deliveries.map(\.behaviour))")
    #expect(deliveries.map(\.behaviour) == [.fail(status: 500), .accept])
    #expect(deliveries[0].id != nil && deliveries[0].id == deliveries[1].id, "a retry keeps its webhook-id")
    #expect(deliveries[0].body == deliveries[1].body, "a retry sends the same document")
    if let t0 = deliveries[0].timestamp.flatMap(Int.init), let t1 = deliveries[1].timestamp.flatMap(Int.init) {
      #expect(t1 - t0 >= 10, "the retry came before its backoff (at least 15 s) passed: \(t1 - t0) s")
    }

    // Nothing left: another notify sends nothing.
    let after = try runForage(["notify", "--config", shop.config])
    #expect(after.status == 0)
    #expect(receiver.deliveries.count == 2)
  }

  // MARK: 4. Killed between sending and marking

  @Test func test_notifyKilledAfterSendingBeforeMarking_resendsWithTheSameID() async throws {
    // The run's attempt hangs until its budget, the killed notify's attempt
    // hangs until the kill, then the receiver accepts.
    let receiver = try WebhookReceiver(script: [.hang(seconds: 120), .hang(seconds: 120)], then: .accept)
    defer { receiver.stop() }
    let shop = try Fixture(notify: #"[{"name": "hook", "webhook": "\#(receiver.url)", "timeout": "5m"}]"#)
    defer { shop.stop() }
    try shop.firstRunThenCutThePrice()
    let second = try shop.run(budget: "10s")  // room for the attempt on a loaded machine
    #expect(second.stdout.contains("notifications: 1 queued, 0 delivered"), "\(second.stdout)")
    #expect(receiver.deliveries.count == 1)

    let notify = try startForage(["notify", "--config", shop.config])
    let sent = try await Self.eventually { receiver.deliveries.count >= 2 || !notify.isRunning }
    #expect(sent && notify.isRunning, "forage notify did not send (or ended): \(receiver.deliveries.count) deliveries")
    kill(notify.processIdentifier, SIGKILL)
    notify.waitUntilExit()
    #expect(notify.terminationReason == .uncaughtSignal)

    let again = try runForage(["notify", "--config", shop.config])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stderr.contains("delivered 1"), "\(again.stderr)")
    let deliveries = receiver.deliveries
    try #require(deliveries.count == 3, "\(deliveries.map(\.behaviour))")
    #expect(deliveries.last?.behaviour == .accept)
    #expect(Set(deliveries.map(\.id)).count == 1 && deliveries[0].id != nil, "every attempt has the same webhook-id")
    #expect(Set(deliveries.map(\.body)).count == 1, "every attempt sends the same document")

    // Marked delivered: nothing goes again.
    let last = try runForage(["notify", "--config", shop.config])
    #expect(last.status == 0)
    #expect(receiver.deliveries.count == 3)
  }

  // MARK: 5. A hanging receiver and the budget

  @Test func test_run_withAHangingReceiver_endsWithinItsBudget_andKeepsTheNotificationQueued() async throws {
    let receiver = try WebhookReceiver(script: [], then: .hang(seconds: 120))
    defer { receiver.stop() }
    // A channel timeout far past the hang: only the budget can end the attempt.
    let shop = try Fixture(notify: #"[{"name": "hook", "webhook": "\#(receiver.url)", "timeout": "5m"}]"#)
    defer { shop.stop() }
    try shop.firstRunThenCutThePrice()
    let started = Date()
    let second = try shop.run(budget: "3s")
    let seconds = Date().timeIntervalSince(started)
    #expect(seconds < 60, "forage run --budget 3s took \(seconds) s with a hanging receiver")
    #expect(second.stdout.contains("records: 0 new, 1 changed"), "\(second.stdout)")
    #expect(second.stdout.contains("notifications: 1 queued, 0 delivered"), "\(second.stdout)")
    #expect(receiver.deliveries.count == 1, "the attempt was made")

    let changes = try runForage(["changes", "--store", shop.store, "--kind", "changed", "--json"])
    #expect(changes.stdout.split(separator: "\n").count == 1, "the change was committed: \(changes.stdout)")
  }

  // MARK: 6. Test notifications

  @Test func test_notifyTest_sendsOneSample_namesTheChannels_appendsToAFile_andExplainsAFailure() throws {
    let receiver = try WebhookReceiver()
    defer { receiver.stop() }
    let shop = try Fixture(notify: #"[{"name": "hook", "webhook": "\#(receiver.url)"}, {"file": "out.jsonl"}]"#)
    defer { shop.stop() }

    let hook = try runForage(["notify", "--config", shop.config, "--test", "hook"])
    #expect(hook.status == 0, "\(hook.stderr)")
    #expect(receiver.deliveries.count == 1)
    #expect(receiver.deliveries.first?.id?.hasPrefix("msg_test_") == true, "\(String(describing: receiver.deliveries.first?.id))")
    #expect(Self.jsonObject(receiver.deliveries.first?.text ?? "")?["type"] as? String == "record.changed")
    #expect(!FileManager.default.fileExists(atPath: shop.store), "a test notification needs no store")

    let unknown = try runForage(["notify", "--config", shop.config, "--test", "nope"])
    #expect(unknown.status == 2)
    #expect(unknown.stderr.contains("nope") && unknown.stderr.contains("hook") && unknown.stderr.contains("file"),
            "\(unknown.stderr)")
    #expect(receiver.deliveries.count == 1)

    let out = shop.dir.file("out.jsonl")
    for round in 1...2 {
      let file = try runForage(["notify", "--config", shop.config, "--test", "file"])
      #expect(file.status == 0, "\(file.stderr)")
      let lines = (try? String(contentsOfFile: out, encoding: .utf8))?.split(separator: "\n", omittingEmptySubsequences: false) ?? []
      #expect(lines.count == round + 1 && lines.last == "", "one whole line per test, appended: \(lines)")
      let objects = lines.dropLast().map { Self.jsonObject($0) }
      #expect(objects.allSatisfy { ($0?["id"] as? String)?.hasPrefix("msg_test_") == true }, "\(lines)")
    }

    // A file channel pointing at a folder: exit 1 and a sentence.
    try FileManager.default.createDirectory(atPath: shop.dir.file("folder"), withIntermediateDirectories: false)
    let folderConfig = try shop.dir.write(
      "folder.json",
      #"{"notify": [{"name": "log", "file": "folder"}], "sources": [{"name": "items", "url": "\#(shop.server.url("/items"))"}]}"#)
    let folder = try runForage(["notify", "--config", folderConfig, "--test", "log"])
    #expect(folder.status == 1)
    #expect(folder.stderr.contains(shop.dir.file("folder")), "\(folder.stderr)")
    #expect(folder.stderr.contains("failed: "), "\(folder.stderr)")
    let typeName = folder.stderr.range(of: #"\b[A-Z][a-z]+[A-Z][A-Za-z]*\b|Optional\(|Error\("#, options: .regularExpression)
    #expect(typeName == nil, "a Swift type name in the message: \(folder.stderr)")
  }

  // MARK: 7. Command channel

  @Test func test_commandChannel_receivesTheNotificationOnStdin() throws {
    let dir = TemporaryDirectory()
    let out = dir.file("received.jsonl")
    let shop = try Fixture(notify: #"[{"command": ["/bin/sh", "-c", "cat >> '\#(out)'"]}]"#)
    defer { shop.stop() }
    try shop.firstRunThenCutThePrice()
    let second = try shop.run()
    #expect(second.stdout.contains("notifications: 1 queued, 1 delivered"), "\(second.stdout)\n\(second.stderr)")

    let text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    let lines = text.split(separator: "\n")
    #expect(lines.count == 1 && text.hasSuffix("\n"), "one JSON document and a newline: \(text)")
    let document = Self.jsonObject(lines.first ?? "")
    #expect(document?["type"] as? String == "record.changed", "\(text)")
    #expect(document?["key"] as? String == "lamp")
    #expect((document?["id"] as? String)?.hasPrefix("msg_") == true, "\(text)")
    #expect(Self.isPriceCut(document?["changes"]), "\(text)")
  }
}
