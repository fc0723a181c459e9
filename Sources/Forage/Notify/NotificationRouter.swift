import ForageStore

/// The config's notification rules, applied to a commit's planned changes
/// (`RecordPlan.route`) before they are written: a change is notable by its source's `notifyWhen` (or the default
/// rule) and goes to the channels its `notifyVia` names (or every channel).
///
///     let router = NotificationRouter(config: config)   // nil without channels
///     PageCommit(item: item, outcome: .done, records: records, router: router, now: .now)
package struct NotificationRouter: ChangeRouter {
  struct Rule: Sendable {
    var conditions: [ChangeCondition]?
    var channels: [String]
  }
  let rules: [String: Rule]

  /// The router of `config`; nil when it has no channels (nothing to route).
  package init?(config: ForageConfig) {
    guard !config.notify.isEmpty else { return nil }
    let all = config.notify.map(\.name)
    var rules: [String: Rule] = [:]
    for source in config.sources {
      let channels = source.notifyVia.map { via in all.filter(via.contains) } ?? all
      rules[source.name] = Rule(conditions: source.notifyWhen, channels: channels)
    }
    self.rules = rules
  }

  /// The channels a source event of `source` goes to: those of its
  /// `notifyVia` (every channel without it), whatever its `notifyWhen`
  /// says of records.
  package func channels(forSourceEvent source: String) -> [String] {
    rules[source]?.channels ?? []
  }

  /// The channels `change` goes to; empty when it is not notable or its
  /// source is not in the config.
  package func channels(for change: RecordChange, firstCrawl: Bool) -> [String] {
    guard let rule = rules[change.source], !rule.channels.isEmpty else { return [] }
    // A field condition reads only its field's values, parsed from their
    // texts in the change's field changes: no record is parsed here, inside
    // the commit's transaction.
    let notable = ChangeCondition.isNotable(change, conditions: rule.conditions, firstCompletedCrawl: firstCrawl)
    return notable ? rule.channels : []
  }
}
