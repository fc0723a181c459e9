import SwiftUI

struct ContentView: View {
  @Bindable var model: RecordsModel
  @State private var wifiOnly = Settings.wifiOnly

  var body: some View {
    NavigationStack {
      List {
        Section {
          TimelineView(.periodic(from: .now, by: 60)) { context in
            Text(refreshedLine(now: context.date)).foregroundStyle(.secondary)
          }
        }
        Section("Records") {
          ForEach(model.records) { record in
            HStack {
              VStack(alignment: .leading) {
                Text(record.value.title)
                Text(record.source).font(.caption).foregroundStyle(.secondary)
              }
              Spacer()
              Text(record.lastSeen, format: .relative(presentation: .named))
                .font(.caption).foregroundStyle(.secondary)
            }
          }
        }
        Section("Settings") {
          Toggle("Refresh the catalogue on Wi-Fi only", isOn: $wifiOnly)
            .onChange(of: wifiOnly) { _, value in Settings.wifiOnly = value }
          Text("Applies from the next launch of the app.").font(.caption).foregroundStyle(.secondary)
        }
        if let problem = model.problem ?? model.prices?.problem ?? model.catalog?.problem {
          Section("Problem") { Text(problem).foregroundStyle(.red) }
        }
      }
      .navigationTitle("Forage")
      .refreshable { await model.reload() }
      .task { await model.follow() }
    }
  }

  /// "Refreshed 12 minutes ago", or that it never was.
  private func refreshedLine(now: Date) -> String {
    guard let last = model.lastRefresh else { return "Not refreshed yet: iOS decides when the first refresh runs." }
    let minutes = Int(now.timeIntervalSince(last) / 60)
    switch minutes {
    case ..<1: return "Refreshed less than a minute ago"
    case 1: return "Refreshed 1 minute ago"
    default: return "Refreshed \(minutes) minutes ago"
    }
  }
}
