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
      {"tasks": [{"id": "a", "kind": "continuedProcessing", "sources": ["s"]}],
       "sources": [{"name": "s", "url": "https://example.com/"}]}
      """#.utf8))
    let kind: ForageScheduler.TaskKind = try #require(config.tasks.first).kind
    #expect(kind == .continuedProcessing)
    #expect(config.tasks[0].budget == SchedulerDefaults.continuedProcessingBudget)
  }
}
