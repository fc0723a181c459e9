import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Forage
import ForageStore
import ForageSupport

/// `forage changes`: the change history, newest first; with `--follow`,
/// oldest first and then live, as commits land.
struct ChangesCommand: Command {
  static let name = "changes"
  static let abstract = "Show what changed in the stored records, newest first."
  static let arguments: [Argument] = [
    .option("--store", "PATH", "The store to read: a SQLite file or a postgres:// URL.", required: true),
    .option("--source", "NAME", "Only this source's changes."),
    .option("--since", "DURATION", "Only changes of the last DURATION, e.g. 1h, 1d, 7d."),
    .repeatable("--kind", "KIND", "Only changes of this kind: new, changed, removed or restored.", default: "every kind"),
    .option("--limit", "N", "At most N changes.", default: "100"),
    .flag("--json", "Print one JSON object per line."),
    .flag("--follow", "Print changes oldest first as they are committed, until stopped (SIGINT or SIGTERM)."),
    .option("--after", "CURSOR", "With --follow: start after this change id (\"start\" for every change kept).", default: "latest"),
  ]
  static let discussion = """
    Lists the changes of the stored records, newest first: records that are
    new, changed (each changed field with its value before and after; long
    text as a word diff), removed (a completed crawl did not see them again)
    or restored (seen again after a removal). Colour on a terminal only.
    JSON Lines rows: {"id","kind","source","key","url","at","run","before",
    "after","changes":[{"field","before","after"}]}.

    With --follow, prints the changes after --after oldest first, then each
    new one as its commit lands (another process's, such as forage run or
    the daemon, within a second), until SIGINT or SIGTERM (exit 0) or
    --limit changes. A row's id is its cursor: --after ID resumes after it.
    When the changes after the cursor were pruned from the history, says so
    and names the oldest cursor kept (exit 1). --since does not apply.
    """

  var store: String
  var source: String?
  var since: Duration?
  var kinds: Set<ChangeKind> = []
  var limit = 100
  var json = false
  var follow = false
  var after = ChangeCursor.latest
  /// `--limit` as given; nil when it was not (a follow then runs until stopped).
  var givenLimit: Int?

  init(_ args: inout ArgumentList) throws(UsageError) {
    guard let s = try args.option("--store") else { throw UsageError("missing --store PATH") }
    store = s
    source = try args.option("--source")
    if let text = try args.option("--since") {
      guard let d = Units.duration(text), d > .zero else {
        throw UsageError("--since expects a duration such as 1h, 1d or 7d, not \"\(text)\"")
      }
      since = d
    }
    for text in try args.options("--kind") {
      for word in text.split(separator: ",").map(String.init) {
        guard let kind = ChangeKind(rawValue: word) else {
          let names = ChangeKind.allCases.map(\.rawValue)
          let hint = Spelling.hint(for: word, in: names)
          throw UsageError("--kind expects new, changed, removed or restored, not \"\(word)\"\(hint)")
        }
        kinds.insert(kind)
      }
    }
    if let text = try args.option("--limit") {
      guard let n = Int(text), n > 0 else { throw UsageError("--limit expects a whole number above 0, not \"\(text)\"") }
      limit = n
      givenLimit = n
    }
    json = args.flag("--json")
    follow = args.flag("--follow")
    if let text = try args.option("--after") {
      guard follow else { throw UsageError("--after applies to --follow only") }
      guard let cursor = ChangeCursor(text) else {
        throw UsageError("--after expects a change id (a whole number), \"start\" or \"latest\", not \"\(text)\"")
      }
      after = cursor
    }
    if follow && since != nil { throw UsageError("--since does not apply to --follow (use --after)") }
    try args.expectNoMore()
  }

  func run(_ out: Terminal) async -> ExitStatus {
    guard let opened = openExistingStore(store, for: "forage changes", out) else { return .badInput }
    do {
      if let source {
        let known = try await opened.sourceNames()
        guard known.contains(source) else {
          let hint = Spelling.hint(for: source, in: known)
          out.error("forage changes: the store has no source \"\(source)\"\(hint)")
          try? await opened.close()
          return .badInput
        }
      }
      if follow {
        let status = await followChanges(opened, out)
        try? await opened.close()
        return status
      }
      let query = ChangeQuery(
        source: source, kinds: kinds, since: since.map { Date().addingTimeInterval(-$0.seconds) }, limit: limit)
      let changes = try await opened.changes(matching: query)
      let colour = !json && useColour(fd: 1)
      var text = ""
      for change in changes {
        if json {
          text += ChangeText.json(change) + "\n"
        } else {
          text += ChangeText.lines(change, colour: colour).joined(separator: "\n") + "\n"
        }
      }
      out.write(1, text)
      if !json && changes.isEmpty { out.note("no changes match") }
      try? await opened.close()
      return .ok
    } catch {
      out.error("forage changes", error)
      try? await opened.close()
      return .jobFailed
    }
  }
}

extension ChangesCommand {
  /// `--follow`: the stream of changes after `after`, printed as they come,
  /// until a signal, `--limit`, or an error.
  private func followChanges(_ store: any Store, _ out: Terminal) async -> ExitStatus {
    let stream = store.changes(source: source, after: after)
    let (kinds, json, limit) = (self.kinds, self.json, givenLimit)
    let colour = !json && useColour(fd: 1)
    let printing = Task { () -> (any Error)? in
      do {
        var printed = 0
        for try await change in stream {
          if !kinds.isEmpty && !kinds.contains(change.kind) { continue }
          out.write(
            1, json ? ChangeText.json(change) + "\n" : ChangeText.lines(change, colour: colour).joined(separator: "\n") + "\n")
          printed += 1
          if let limit, printed >= limit { break }
        }
        return nil
      } catch {
        return error
      }
    }
    let (signals, _) = SignalWatcher.stopping("forage changes", "stopping", out) { printing.cancel() }
    let failure = await printing.value
    signals.cancel()
    guard let failure else { return .ok }
    out.error("forage changes", failure)
    return .jobFailed
  }
}
