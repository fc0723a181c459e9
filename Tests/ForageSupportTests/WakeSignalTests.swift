import Testing

@testable import ForageSupport

/// The one wake signal of the package (the system scheduler's run loop and a
/// launch's notification delivery both wait on it). A wait that should
/// return but does not would hang: the time limit turns that into a failure.
@Suite(.timeLimit(.minutes(1))) struct WakeSignalTests {
  @Test func test_pokeSentBeforeTheWait_isKept_once() async {
    let wake = WakeSignal()
    wake.poke()
    wake.poke()
    #expect(await wake.wait())
    // The second poke did not queue a second round: a halt after it is what
    // the next wait sees.
    wake.halt()
    #expect(await wake.wait() == false)
  }

  @Test func test_pokeWakesAWaitingLoop() async {
    let wake = WakeSignal()
    let waiting = Task { await wake.wait() }
    wake.poke()
    #expect(await waiting.value)
  }

  @Test func test_finish_givesOneLastRound_thenStops() async {
    let wake = WakeSignal()
    wake.finish()
    #expect(await wake.wait())
    #expect(await wake.wait() == false)
    #expect(await wake.wait() == false)
  }

  @Test func test_pokeBeforeFinish_comesFirst_thenTheLastRound() async {
    let wake = WakeSignal()
    wake.poke()
    wake.finish()
    #expect(await wake.wait())
    #expect(await wake.wait())
    #expect(await wake.wait() == false)
  }

  @Test func test_halt_endsAWaitingLoop_andEveryLaterWait() async {
    let wake = WakeSignal()
    let waiting = Task { await wake.wait() }
    wake.halt()
    #expect(await waiting.value == false)
    wake.poke()
    wake.finish()
    #expect(await wake.wait() == false)
  }

  @Test func test_cancelledWait_returnsFalse_andLeavesThePokeForTheNext() async {
    let wake = WakeSignal()
    wake.poke()
    let cancelled = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await wake.wait()
    }
    #expect(await cancelled.value == false)
    #expect(await wake.wait())
  }

  @Test func test_cancellingAWaitingTask_endsItsWait() async {
    let wake = WakeSignal()
    let waiting = Task { await wake.wait() }
    waiting.cancel()
    #expect(await waiting.value == false)
  }

  @Test func test_waitWithTimeout_returnsOnAPoke_andOnTheTimeout_leavingTheSignalUsable() async {
    let wake = WakeSignal()
    wake.poke()
    await wake.wait(timeout: .seconds(3_600))  // the poke, not the hour
    await wake.wait(timeout: .milliseconds(1))  // nothing pending: the timeout
    // The timed-out wait was cancelled; that leaves the signal working.
    wake.poke()
    #expect(await wake.wait())
  }
}
