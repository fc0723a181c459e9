import Foundation
import Testing

@testable import Forage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The "command" channel's runner: real programs (/bin/sh and friends),
/// ended by exit, signal, timeout or cancellation.
@Suite struct CommandRunnerTests {
  /// Bytes that are not all one value, so a reordering would show.
  static func input(_ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 10)) }
  }

  @Test func test_exit0_stdinReachesTheProgram() async throws {
    let dir = TemporaryDirectory()
    let file = dir.file("stdin.bin")
    // Several pipe buffers' worth, so stdin is written in many pieces.
    let input = Self.input(300_000)
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", #"cat > "$1""#, "sh", file], input: input, timeout: .seconds(60))
    #expect(outcome == CommandOutcome(end: .exited(0), stderrTail: ""))
    let written = try Data(contentsOf: URL(fileURLWithPath: file))
    #expect(Array(written) == input)
  }

  /// A program's parent-death signal (Linux: see ParentDeath) watches the
  /// *thread* that spawned it: a program spawned from a thread that then
  /// ends must keep running. Spawned from a pthread that ends once the
  /// program runs (so setpriv has set the signal), then is joined, it still
  /// reads its input and exits 3 (spawned from the calling thread, it was
  /// killed by SIGKILL).
  @Test func test_aProgramOutlivesTheThreadThatSpawnedIt() async throws {
    final class Box: @unchecked Sendable {
      let ready: String
      var spawned: Result<RunningCommand, CommandRunner.SpawnProblem>?
      init(ready: String) { self.ready = ready }

      func spawnAndWaitUntilRunning() {
        spawned = CommandRunner.spawn(
          path: "/bin/sh", argv: ["sh", "-c", #"echo > "$1"; read a; read b; exit 3"#, "sh", ready], environment: [:])
        // The program's first step, not a time: it has left setpriv.
        for _ in 0..<60_000 where !FileManager.default.fileExists(atPath: ready) { usleep(1000) }
      }
    }
    let dir = TemporaryDirectory()
    let box = Box(ready: dir.file("ready"))
    #if os(Linux)
    var thread = pthread_t()
    let context = Unmanaged.passRetained(box).toOpaque()
    let created = pthread_create(&thread, nil, { context in
      Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().spawnAndWaitUntilRunning()
      return nil
    }, context)
    #expect(created == 0)
    pthread_join(thread, nil)
    #else
    box.spawnAndWaitUntilRunning()
    #endif
    let child = try #require(try box.spawned?.get())
    #expect(FileManager.default.fileExists(atPath: box.ready))
    // The kernel sends the signal as the thread's exit completes, a moment
    // after the join: another program's whole run outlasts that moment.
    #expect(await CommandRunner.run(["/bin/sh", "-c", "exit 0"], input: [], timeout: .seconds(60)).end == .exited(0))
    child.start(input: Array("1\n2\n".utf8), timeout: .seconds(60))
    let outcome = await withCheckedContinuation { child.whenDone($0) }
    #expect(outcome.end == .exited(3))
  }

  @Test func test_exitStatus3() async {
    let outcome = await CommandRunner.run(["/bin/sh", "-c", "exit 3"], input: [], timeout: .seconds(60))
    #expect(outcome.end == .exited(3))
  }

  @Test func test_missingProgram_couldNotStart() async {
    let missing = await CommandRunner.run(["forage-no-such-program"], input: [1], timeout: .seconds(60))
    #expect(missing.end == .couldNotStart(#"no program named "forage-no-such-program" on PATH"#))

    let badPath = await CommandRunner.run(["/nonexistent/forage-notify"], input: [1], timeout: .seconds(60))
    #expect(badPath.end == .couldNotStart("there is no program at /nonexistent/forage-notify"))

    let empty = await CommandRunner.run([], input: [1], timeout: .seconds(60))
    guard case .couldNotStart(let reason) = empty.end else {
      Issue.record("an empty argv ended as \(empty.end)")
      return
    }
    #expect(reason.contains("empty"))
  }

  @Test func test_notExecutable_couldNotStart() async throws {
    let dir = TemporaryDirectory()
    let file = dir.file("notify.sh")
    try "#!/bin/sh\nexit 0\n".write(toFile: file, atomically: true, encoding: .utf8)
    // Mode 0644: readable, not executable.
    let outcome = await CommandRunner.run([file], input: [], timeout: .seconds(60))
    #expect(outcome.end == .couldNotStart("the program \(file) may not be run (permission denied)"))
  }

  @Test func test_programFoundOnTheGivenPATH_withTheGivenEnvironment() async {
    let outcome = await CommandRunner.run(
      ["sh", "-c", #"test "$FORAGE_TEST_VALUE" = "a b" && test -z "$HOME" && exit 4"#],
      input: [], timeout: .seconds(60),
      environment: ["PATH": "/nonexistent:/bin:/usr/bin", "FORAGE_TEST_VALUE": "a b"])
    #expect(outcome.end == .exited(4))
  }

  @Test func test_hangingProgram_timesOut() async {
    let clock = ContinuousClock()
    let start = clock.now
    let outcome = await CommandRunner.run(["sleep", "30"], input: [], timeout: .seconds(1))
    #expect(outcome.end == .timedOut)
    // It returned, and well before the program would have ended by itself.
    #expect(start.duration(to: clock.now) < .seconds(20))
  }

  @Test func test_programIgnoringSIGTERM_isKilled() async {
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30"], input: [], timeout: .seconds(1))
    #expect(outcome.end == .timedOut)
  }

  #if os(Linux)
  @Test func test_timeout_stopsTheProgramsItStarted() async throws {
    let dir = TemporaryDirectory()
    let pidFile = dir.file("pid")
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", #"sleep 30 & echo $! > "$1"; wait"#, "sh", pidFile], input: [], timeout: .seconds(1))
    #expect(outcome.end == .timedOut)
    let text = try String(contentsOfFile: pidFile, encoding: .utf8)
    let pid = try #require(Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    // The background sleep got the signal too: gone, or a zombie nobody has
    // reaped yet (a container's PID 1 may never do it). A killed process may
    // still be on its way out when the runner returns (a loaded machine had it
    // running for a moment), so this polls for the end, within a bound far
    // longer than an exit takes and far shorter than the sleep's 30 s.
    func ended() -> (Bool, String) {
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      let state = stat.split(separator: ")").last?.split(separator: " ").first.map(String.init)
      return (stat.isEmpty || state == "Z", stat)
    }
    let clock = ContinuousClock()
    let bound = clock.now + .seconds(10)
    var (gone, stat) = ended()
    while !gone && clock.now < bound {
      try await Task.sleep(for: .milliseconds(20))
      (gone, stat) = ended()
    }
    #expect(gone, "the background sleep \(pid) is still running: \(stat)")
  }
  #endif

  @Test func test_programExitingWithoutReadingLargeStdin() async {
    let big = Self.input(4 * 1024 * 1024)
    let unread = await CommandRunner.run(["/bin/sh", "-c", "exit 0"], input: big, timeout: .seconds(60))
    #expect(unread.end == .exited(0))
    let partly = await CommandRunner.run(
      ["/bin/sh", "-c", "head -c 10 > /dev/null; exit 5"], input: big, timeout: .seconds(60))
    #expect(partly.end == .exited(5))
  }

  @Test func test_stderrTail_keepsTheLast2KiB() async {
    let script = #"i=0; while [ $i -lt 3000 ]; do echo "line $i" >&2; i=$((i+1)); done; echo END >&2; exit 2"#
    let outcome = await CommandRunner.run(["/bin/sh", "-c", script], input: [], timeout: .seconds(60))
    #expect(outcome.end == .exited(2))
    #expect(outcome.stderrTail.utf8.count <= CommandRunner.stderrTailLimit)
    #expect(outcome.stderrTail.utf8.count > CommandRunner.stderrTailLimit - 20)
    #expect(outcome.stderrTail.hasSuffix("line 2998\nline 2999\nEND\n"))
    #expect(!outcome.stderrTail.contains("line 1000\n"))
  }

  @Test func test_megabytesOfStderr_doNotBlock() async {
    let script = #"head -c 3000000 /dev/zero | tr '\0' x >&2; echo done >&2"#
    let outcome = await CommandRunner.run(["/bin/sh", "-c", script], input: [], timeout: .seconds(60))
    #expect(outcome.end == .exited(0))
    #expect(outcome.stderrTail == String(repeating: "x", count: CommandRunner.stderrTailLimit - 5) + "done\n")
  }

  @Test func test_stdoutIsDiscarded() async {
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", "head -c 3000000 /dev/zero; echo out"], input: [], timeout: .seconds(60))
    #expect(outcome == CommandOutcome(end: .exited(0), stderrTail: ""))
  }

  @Test func test_signalledProgram() async {
    let outcome = await CommandRunner.run(["/bin/sh", "-c", "kill -USR1 $$"], input: [], timeout: .seconds(60))
    #expect(outcome.end == .signalled(SIGUSR1))
  }

  @Test func test_cancellingTheCallingTask_killsTheProgram() async throws {
    let dir = TemporaryDirectory()
    let pidFile = dir.file("pid")
    let run = Task {
      await CommandRunner.run(
        ["/bin/sh", "-c", #"echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 30"#, "sh", pidFile],
        input: [], timeout: .seconds(120))
    }
    // Wait until the program runs (its pid file appears), then cancel.
    var pid: Int32?
    for _ in 0..<6000 where pid == nil {
      if let text = try? String(contentsOfFile: pidFile, encoding: .utf8) {
        pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
      } else {
        try await Task.sleep(for: .milliseconds(10))
      }
    }
    let child = try #require(pid)
    run.cancel()
    let outcome = await run.value
    #expect(outcome.end == .signalled(SIGTERM))
    // Reaped by the runner: no such process any more.
    #expect(kill(child, 0) == -1 && errno == ESRCH)
  }

  @Test func test_cancelledBeforeStarting_doesNotRun() async {
    let dir = TemporaryDirectory()
    let marker = dir.file("ran")
    let run = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await CommandRunner.run(
        ["/bin/sh", "-c", #"touch "$1""#, "sh", marker], input: [], timeout: .seconds(60))
    }
    let outcome = await run.value
    guard case .couldNotStart = outcome.end else {
      Issue.record("a run cancelled before it started ended as \(outcome.end)")
      return
    }
    #expect(!FileManager.default.fileExists(atPath: marker))
  }

  #if os(Linux)
  @Test func test_childGetsOnlyTheStandardStreams() async throws {
    // A descriptor of ours without close-on-exec must not reach the child.
    let dir = TemporaryDirectory()
    let leakyPath = dir.file("leaky")
    let leaky = open(leakyPath, O_WRONLY | O_CREAT, 0o600)
    defer { close(leaky) }
    #expect(leaky > 2)
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", #"echo "stdout $(readlink /proc/$$/fd/1)" >&2; exec ls -l /proc/self/fd >&2"#], input: [1, 2, 3],
      timeout: .seconds(60))
    #expect(outcome.end == .exited(0))
    // The shell's stdout (ls's is pointed at stderr to show its listing).
    #expect(outcome.stderrTail.hasPrefix("stdout /dev/null\n"), "\(outcome.stderrTail)")
    // "N -> target" per descriptor; ls's own is the directory it lists.
    var seen: [String: String] = [:]
    for line in outcome.stderrTail.split(separator: "\n") {
      guard let arrow = line.range(of: " -> ") else { continue }
      let number = line[..<arrow.lowerBound].split(separator: " ").last.map(String.init) ?? ""
      seen[number] = String(line[arrow.upperBound...])
    }
    #expect(seen["0"]?.hasPrefix("pipe:") == true, "\(outcome.stderrTail)")
    #expect(seen["2"]?.hasPrefix("pipe:") == true, "\(outcome.stderrTail)")
    let others = seen.filter { !["0", "1", "2"].contains($0.key) && !$0.value.hasPrefix("/proc/") }
    #expect(others.isEmpty, "descriptors the child should not have: \(others)")
  }

  @Test func test_childGetsDefaultSignals_andAnEmptyMask() async throws {
    // An ignored signal stays ignored across exec unless the runner resets
    // it (the CLI ignores SIGINT and SIGTERM while it watches them); this
    // test ignores SIGUSR2, which nothing else in the process uses, for the run.
    let previous = signal(SIGUSR2, SIG_IGN)
    let outcome = await CommandRunner.run(
      ["/bin/sh", "-c", "exec grep -E '^Sig(Ign|Blk):' /proc/self/status >&2"], input: [], timeout: .seconds(60))
    signal(SIGUSR2, previous)
    #expect(outcome.end == .exited(0))
    var masks: [String: UInt64] = [:]
    for line in outcome.stderrTail.split(separator: "\n") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == "\t" || $0 == " " })
      if parts.count == 2 { masks[String(parts[0])] = UInt64(parts[1], radix: 16) }
    }
    // Bits 0…30 are signals 1…31; the real-time ones above may be the C
    // library's own and are left alone.
    let classic: UInt64 = (1 << 31) - 1
    let ignored = try #require(masks["SigIgn"], "\(outcome.stderrTail)")
    let blocked = try #require(masks["SigBlk"], "\(outcome.stderrTail)")
    #expect(ignored & classic == 0, "ignored: \(String(ignored, radix: 16))")
    #expect(blocked & classic == 0, "blocked: \(String(blocked, radix: 16))")
  }
  #endif

  @Test func test_stderrTail_dropsACharacterCutByTheLimit() {
    var tail = StderrTail(limit: 3)
    let text = Array("aé€x".utf8)  // a, é (2 bytes), € (3 bytes), x
    text.withUnsafeBytes { tail.append($0) }
    // The last 3 bytes start inside € (0x82 0xac) then x: the partial character is dropped.
    #expect(tail.text() == "x")
    var whole = StderrTail(limit: 16)
    text.withUnsafeBytes { whole.append($0) }
    #expect(whole.text() == "aé€x")
  }
}
