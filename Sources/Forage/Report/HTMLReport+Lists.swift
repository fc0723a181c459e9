import Foundation
import ForageStore

/// The report's lists: recent changes with their field diffs, errors grouped
/// by cause, the notification outbox; and the page's CSS.
extension Report {
  // MARK: Changes

  static func kindClass(_ kind: ChangeKind) -> String {
    switch kind {
    case .new: return "k-new"
    case .changed: return "k-changed"
    case .removed: return "k-removed"
    case .restored: return "k-restored"
    }
  }

  func changesSection() -> String {
    var h = "<section id=\"changes\">\n<h2>Recent changes</h2>\n"
    if changes.isEmpty { return h + "<p>No changes recorded.</p>\n</section>\n" }
    h += "<p class=\"muted\">The newest \(changes.count), newest first: removed text "
    h += "<del>struck through</del>, added text <ins>underlined</ins>.</p>\n"
    for change in changes {
      h += "<article class=\"change\">\n<div class=\"head\"><span class=\"badge \(Report.kindClass(change.kind))\">"
      h += "\(change.kind.rawValue)</span> <b class=\"name\">\(esc(change.source))</b> "
      h += "<code class=\"key\">\(esc(change.key))</code> <time class=\"muted\">\(esc(dateText(change.at)))</time></div>\n"
      if !change.url.isEmpty { h += "<div class=\"url\">\(esc(change.url))</div>\n" }
      let fields = change.fieldChanges
      if change.kind == .new || change.kind == .removed {
        // A whole record: its fields on one compact line.
        h += "<p class=\"fields\">"
        h += fields.map { "<span><span class=\"fn\">\(esc($0.field))</span> \(diff($0, kind: change.kind))</span>" }
          .joined(separator: " ")
        h += "</p>\n"
      } else if !fields.isEmpty {
        h += "<table class=\"diff\"><tbody>\n"
        for field in fields {
          h += "<tr><th>\(esc(field.field))</th><td>\(diff(field, kind: change.kind))</td></tr>\n"
        }
        h += "</tbody></table>\n"
      }
      h += "</article>\n"
    }
    return h + "</section>\n"
  }

  /// A field's change as HTML: the value of a new or removed record, a word
  /// diff of long text, or the old value struck through and the new one.
  func diff(_ field: FieldChange, kind: ChangeKind) -> String {
    let before = field.beforeValue, after = field.afterValue
    switch kind {
    case .new: return "<ins>\(esc(show(after)))</ins>"
    case .removed: return "<del>\(esc(show(before)))</del>"
    case .changed, .restored: break
    }
    if case .string(let old)? = before, case .string(let new)? = after,
      WordDiff.isLongText(old) || WordDiff.isLongText(new)
    {
      let parts = WordDiff.diff(old, new).map { part -> String in
        switch part {
        case .same(let s): return esc(s)
        case .removed(let s): return "<del>\(esc(s))</del>"
        case .added(let s): return "<ins>\(esc(s))</ins>"
        }
      }
      return "<div class=\"words\">\(parts.joined())</div>"
    }
    return "<del>\(esc(show(before)))</del> → <ins>\(esc(show(after)))</ins>"
  }

  /// A value as a person reads it: text as itself, anything else as JSON,
  /// `(none)` when absent.
  func show(_ value: JSONValue?) -> String {
    guard let value else { return "(none)" }
    if case .string(let s) = value { return s }
    return value.serialized()
  }

  // MARK: Errors

  func errorsSection() -> String {
    var h = "<section id=\"errors\">\n<h2>Errors by cause</h2>\n"
    let rows = status.sources.flatMap { s in s.errors.map { (source: s.name, group: $0) } }
    if rows.isEmpty { return h + "<p>No failed pages in the recent launches.</p>\n</section>\n" }
    h += "<p class=\"muted\">Failed pages of each source's recent launches, grouped by cause, most frequent first.</p>\n"
    h += "<div class=\"scroll\"><table><thead><tr><th>Source</th><th>Cause</th><th class=\"n\">Pages</th>"
    h += "<th>First at</th></tr></thead><tbody>\n"
    for row in rows {
      h += "<tr><td class=\"name\">\(esc(row.source))</td><td class=\"cause\">\(esc(row.group.cause))</td>"
      h += "<td class=\"n\">\(row.group.count)</td><td class=\"url\">\(esc(row.group.firstURL))</td></tr>\n"
    }
    return h + "</tbody></table></div>\n</section>\n"
  }

  // MARK: Notifications

  func outboxSection() -> String {
    let o = status.notifications
    var h = "<section id=\"notifications\">\n<h2>Notifications</h2>\n<div class=\"cards\">\n"
    h += card("Pending", "\(o.pending)")
    h += card("Retrying", "\(o.retrying)")
    h += card("Delivered", "\(o.delivered)")
    h += card("Dead", "\(o.dead)", bad: o.dead > 0)
    h += "</div>\n"
    if o.pending > 0, let next = o.nextAttemptAt {
      h += "<p class=\"muted\">Next attempt: \(esc(next > now ? dateText(next) : "now"))</p>\n"
    }
    if !dead.isEmpty {
      h += "<h3>Dead (given up)</h3>\n" + notificationTable(dead, reasonHeading: "Why")
    }
    let retrying = pending.filter { $0.attempts > 0 }
    if !retrying.isEmpty {
      h += "<h3>Retrying</h3>\n" + notificationTable(retrying, reasonHeading: "Last error", next: true)
    }
    return h + "</section>\n"
  }

  func notificationTable(_ list: [OutboxNotification], reasonHeading: String, next: Bool = false) -> String {
    var h = "<div class=\"scroll\"><table><thead><tr><th>Channel</th><th>Change or event</th><th class=\"n\">Attempts</th>"
    h += next ? "<th>Next attempt</th>" : "<th>Queued</th>"
    h += "<th>\(esc(reasonHeading))</th></tr></thead><tbody>\n"
    for n in list {
      h += "<tr><td class=\"name\">\(esc(n.channel))</td><td>"
      if let event = n.event {
        // A source event (issue 29), not a record's change: its kind and episode.
        h += "<span class=\"badge \(event.kind == .unhealthy ? "bad" : "k-new")\">\(event.kind.rawValue)</span> "
        h += "\(esc(event.episode.source)) <span class=\"muted\">\(esc(event.episode.evidence))</span></td>"
      } else {
        h += "<span class=\"badge \(Report.kindClass(n.change.kind))\">\(n.change.kind.rawValue)</span> "
        h += "\(esc(n.change.source)) <code class=\"key\">\(esc(n.change.key))</code></td>"
      }
      h += "<td class=\"n\">\(n.attempts)</td><td>\(esc(dateText(next ? n.nextAttemptAt : n.createdAt)))</td>"
      h += "<td class=\"cause\">\(esc(n.lastError ?? "given up"))</td></tr>\n"
    }
    return h + "</tbody></table></div>\n"
  }

  // MARK: Style

  /// The page's only style: no `url()`, no import, no web font.
  static let css = """

    :root{--bg:#fbfbfa;--fg:#1d1f21;--muted:#5f6368;--card:#fff;--line:#dadce0;--lane:#eef0f2;
    --ok:#1e8e3e;--budget:#e8a10c;--interrupted:#7e57c2;--failed:#d93025;--unfinished:#9aa0a6;
    --age:#1a73e8;--ins:#d7f5dd;--ins-fg:#0b5c1d;--del:#fbdcd9;--del-fg:#8c1d18}
    @media (prefers-color-scheme: dark){:root{--bg:#17181a;--fg:#e8eaed;--muted:#a0a4a8;--card:#222428;
    --line:#3c4043;--lane:#2a2c30;--ok:#5bb974;--budget:#fcc934;--interrupted:#b39ddb;--failed:#f28b82;
    --unfinished:#80868b;--age:#8ab4f8;--ins:#1e3a26;--ins-fg:#a8e6b4;--del:#4a2422;--del-fg:#f6aea9}}
    *{box-sizing:border-box}
    body{margin:0;background:var(--bg);color:var(--fg);
    font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
    .wrap{max-width:1100px;margin:0 auto;padding:12px 16px 40px}
    h1{font-size:1.6em;margin:.4em 0 .1em}h2{font-size:1.25em;margin:1.6em 0 .4em;
    border-bottom:1px solid var(--line);padding-bottom:.2em}h3{font-size:1.05em;margin:1.2em 0 .4em}
    p{margin:.4em 0}.muted{color:var(--muted);font-size:.92em}
    code,.url,.cause{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
    .name,code,.url,.cause{overflow-wrap:anywhere}td,th{overflow-wrap:break-word}
    td.name{min-width:7em}td.url,td.cause{min-width:12em}.scroll>table{min-width:520px}
    .url{color:var(--muted)}
    .cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:8px;margin:.8em 0}
    .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 10px}
    .card .num{font-size:1.5em;font-weight:600}.card.bad .num{color:var(--failed)}
    .healthy{color:var(--ok);font-weight:600}
    .attention{border-left:4px solid var(--failed);padding:2px 12px;background:var(--card)}
    .attention h2{border:0;margin-top:.4em}
    .row{display:grid;grid-template-columns:minmax(120px,220px) 1fr;gap:4px 16px;margin:14px 0;align-items:start}
    @media (max-width:640px){.row{grid-template-columns:1fr}.axis .wide{display:none}}
    svg{display:block;width:100%}
    .strip{height:22px}.chart{height:90px}.chart.short{height:56px}
    .lane{fill:var(--lane)}
    .o-completed{fill:var(--ok);background:var(--ok)}.o-budget{fill:var(--budget);background:var(--budget)}
    .o-interrupted{fill:var(--interrupted);background:var(--interrupted)}
    .o-failed{fill:var(--failed);background:var(--failed)}
    .o-unfinished{fill:var(--unfinished);background:var(--unfinished);stroke:var(--failed);stroke-dasharray:2 2}
    .sw{display:inline-block;width:.9em;height:.9em;border-radius:2px;margin-right:.3em;vertical-align:-.1em}
    .sw-gap{border:1px dashed var(--muted)}
    .c-charging{fill:var(--ok);background:var(--ok)}.c-battery{fill:var(--budget);background:var(--budget)}
    .c-lowpower{fill:var(--failed);background:var(--failed)}.cond{height:8px;margin-top:2px}
    .legend span{white-space:nowrap;margin-right:.8em;font-size:.92em}
    .gap{border:1px dashed var(--muted);color:var(--muted);font-size:.8em;padding:1px 6px;margin-top:3px;border-radius:3px}
    .axis{display:flex;justify-content:space-between;color:var(--muted);font-size:.75em;margin-top:2px}
    .scale{color:var(--muted);font-size:.75em;text-align:right}
    .age{fill:none;stroke:var(--age);stroke-width:2}.age-area{fill:var(--age);opacity:.18}
    .p-ok{fill:var(--ok)}.p-failed{fill:var(--failed)}
    .f-worst{fill:var(--age);opacity:.25}.f-p95{fill:var(--age);opacity:.5}.f-median{fill:var(--age)}
    .bar{height:14px}.barcell{min-width:90px;width:30%}
    .bars{display:grid;gap:6px}
    .barrow{display:grid;grid-template-columns:minmax(90px,200px) 1fr minmax(120px,auto);gap:10px;align-items:center}
    @media (max-width:640px){.barrow{grid-template-columns:1fr 1.4fr}.barrow .n{grid-column:1/-1}}
    .t-page{fill:var(--age)}.t-slow{fill:var(--failed)}.barrow.slow .name{font-weight:700;color:var(--failed)}
    .badge{display:inline-block;font-size:.78em;font-weight:600;padding:0 .45em;border-radius:4px;
    background:var(--lane);color:var(--fg)}
    .badge.bad{background:var(--del);color:var(--del-fg)}
    .k-new,.k-restored{background:var(--ins);color:var(--ins-fg)}.k-removed{background:var(--del);color:var(--del-fg)}
    .k-changed{background:var(--budget);color:#1d1f21}
    .h-records{fill:var(--ok)}.h-held{fill:var(--failed)}.cov{fill:none;stroke:var(--age);stroke-width:1.5}
    .ep-band{fill:var(--failed);opacity:.14}.ep-start,.ep-end{stroke:var(--failed);stroke-width:2}
    .ep-end{stroke-dasharray:4 3}.episodes{margin:.3em 0;padding-left:1.2em}.episodes li{margin:.2em 0}
    .change{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 12px;margin:10px 0}
    .change .head{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline}
    table{border-collapse:collapse;width:100%;font-size:.92em}
    th,td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line);vertical-align:top}
    th{font-weight:600}td.n,th.n{text-align:right;white-space:nowrap}
    .diff th{width:28%;color:var(--muted);font-weight:500}.diff{margin-top:6px}
    .scroll{overflow-x:auto}
    ins{background:var(--ins);color:var(--ins-fg);text-decoration:underline}
    del{background:var(--del);color:var(--del-fg)}
    .words{white-space:pre-wrap}
    .fields{margin:.3em 0 0;overflow-wrap:anywhere}.fields>span{margin-right:1em}.fn{color:var(--muted);font-size:.9em}
    details{margin-top:6px}summary{cursor:pointer;color:var(--muted);font-size:.9em}
    .note{border-left:4px solid var(--budget);padding:2px 10px}
    footer{margin-top:2em;color:var(--muted);font-size:.85em}

    """
}
