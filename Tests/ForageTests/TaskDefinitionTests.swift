import ForageScheduler
import Testing

@testable import Forage

@Suite struct TaskDefinitionTests {
  @Test func test_defaultBudget_isTheSchedulersBudgetForTheKind() {
    for kind in TaskKind.allCases {
      let task = TaskDefinition(id: "t", kind: kind, sources: [])
      #expect(task.budget == kind.defaultBudget)
      #expect(task.budget == SchedulingPolicy().budget(for: kind, identifier: "t"), "\(kind)")
    }
    #expect(TaskDefinition(id: "t", kind: .continuedProcessing, sources: []).budget == .seconds(3600))
  }

  @Test func test_configKinds_areTheSchedulersKinds() throws {
    let config = try ForageConfig.parse(Array(#"""
      {"tasks": [{"id": "a", "kind": "processing", "sources": ["s"]}],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """#.utf8))
    let kind: ForageScheduler.TaskKind = try #require(config.tasks.first).kind
    #expect(kind == .processing)
    #expect(config.tasks[0].budget == SchedulerDefaults.processingBudget)
  }

  /// Issue 14: `continuedProcessing` silently became a processing request.
  /// Issue 26: the config reads it as what it is, the user's "refresh now".
  @Test func test_issue14_continuedProcessingKind_isReadAsItself_neverAsProcessing() throws {
    let config = try ForageConfig.parse(Array(#"""
      {"tasks": [{"id": "a", "kind": "continuedProcessing", "title": "Refreshing", "sources": ["s"]}],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """#.utf8))
    #expect(config.tasks[0].kind == .continuedProcessing)
    let request = try TaskRunner.request(for: config.tasks[0], earliestBeginDate: nil)
    #expect(request.kind == .continuedProcessing)
    #expect(request is ContinuedProcessingTaskRequest)
  }

  /// Issue 14: `"budget": "10m"` ran a refresh 51 s without expiry. The
  /// system sets a refresh's time: the budget is clamped, with a warning.
  @Test func test_issue14_appRefreshBudget_isClampedTo30s_withAWarning() throws {
    var warnings: [ConfigProblem] = []
    let config = try ForageConfig.parse(Array(#"""
      {"tasks": [{"id": "r", "kind": "appRefresh", "budget": "10m", "sources": ["s"]},
                 {"id": "p", "kind": "processing", "budget": "10m", "sources": ["s"]},
                 {"id": "q", "kind": "appRefresh", "budget": "5s", "sources": ["s"]}],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """#.utf8)) { warnings.append($0) }
    #expect(config.tasks.map(\.budget) == [.seconds(30), .seconds(600), .seconds(5)])
    #expect(warnings.count == 1)
    #expect(warnings.first?.path == "tasks[0].budget")
    #expect(warnings.first?.message.contains("clamped to 30s") == true)
    // The scheduler applies the same ceiling to budgets set in code.
    var policy = SchedulingPolicy()
    policy.budgetOverrides = ["r": .seconds(600), "p": .seconds(600)]
    #expect(policy.budget(for: .appRefresh, identifier: "r") == .seconds(30))
    #expect(policy.budget(for: .processing, identifier: "p") == .seconds(600))
  }
}
