import Foundation
import ForageSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How one run of a command ended.
struct CommandOutcome: Sendable, Hashable {
  /// The way the run ended.
  enum End: Sendable, Hashable {
    /// The program exited with this status.
    case exited(Int32)
    /// The program was ended by this signal (one it did not handle). A run
    /// whose calling task was cancelled usually ends as `.signalled(SIGTERM)`.
    case signalled(Int32)
    /// The timeout passed and the program was stopped (SIGTERM, then SIGKILL),
    /// however it then ended.
    case timedOut
    /// The program never ran; the sentence says why (it names the program).
    case couldNotStart(String)
  }

  /// The way the run ended.
  var end: End
  /// The last 2 KiB (at most) of what the program wrote to stderr, decoded
  /// as UTF-8 with invalid bytes replaced (a character cut by the 2 KiB
  /// boundary is dropped, not replaced).
  var stderrTail: String
}

/// Runs the "command" notification channel's program: argv (no shell), a
/// document on stdin, a timeout, the exit status as the outcome.
///
///     let outcome = await CommandRunner.run(["notify-send-json"], input: body, timeout: .seconds(30))
///     if outcome.end == .exited(0) { … }
///
/// Built on `posix_spawn` and two dedicated threads per run rather than
/// Foundation's `Process`, which on Linux (swift-corelibs-foundation) lets the
/// child inherit the spawning thread's signal mask (a Swift concurrency
/// worker blocks most signals, so the child would too: SIGTERM would not
/// stop it) and the dispositions we set (the CLI ignores SIGINT and SIGTERM
/// while it watches them), hands the child a socket it uses to notice the
/// exit (so a grandchild keeping it open delays the termination handler),
/// and needs a run loop thread.
///
/// What a run does:
/// - The child gets the input on a pipe as stdin, /dev/null as stdout and a
///   pipe as stderr, of which only the tail is kept; no other descriptor of
///   ours (all of ours are close-on-exec, and the rest are closed in the
///   child), default dispositions for the common signals and an empty signal
///   mask, and a process group of its own, so a timeout or cancellation
///   stops the programs it started too. The group is listed in
///   ``ChildProcesses`` while the program runs, so a process that quits at
///   once kills it first.
/// - An I/O thread writes stdin and reads stderr without blocking on either
///   (`poll`), so a child that never reads a large input, or writes
///   megabytes to stderr, cannot stall the run; it also keeps the time and
///   sends the signals. A waiter thread blocks in `waitid` for the exit.
///   The calling task only awaits a continuation: no cooperative thread is
///   held for the child's lifetime.
/// - SIGPIPE: a write to a pipe whose reader is gone raises SIGPIPE, whose
///   default action kills our whole process. Neither the Swift runtime nor
///   Foundation ignores it on Linux, and ignoring it process-wide would
///   change the behaviour of every other write in the program. So the I/O
///   thread blocks SIGPIPE for itself (the signal is directed at the thread
///   that wrote, so it stays pending there, is taken back with
///   `sigtimedwait`, and the write fails with EPIPE); on Darwin the pipe is
///   marked `F_SETNOSIGPIPE` instead.
enum CommandRunner {
  /// How many bytes of stderr `CommandOutcome.stderrTail` keeps.
  static let stderrTailLimit = 2048
  /// How long a program has after SIGTERM before it gets SIGKILL.
  static let killGrace: Duration = .seconds(1)

  /// Runs argv[0] (looked up on PATH when it has no slash) with `input` on
  /// stdin; kills the process (SIGTERM, then SIGKILL after 1 s) when
  /// `timeout` passes or the calling task is cancelled.
  ///
  /// - Parameters:
  ///   - argv: the program and its arguments; no shell is involved.
  ///   - input: the bytes written to the program's stdin, which is then
  ///     closed. A program may exit without reading them.
  ///   - timeout: the longest the run may take.
  ///   - environment: the program's whole environment; nil passes ours. The
  ///     `PATH` of the environment the program gets is the one searched for
  ///     argv[0] (`defaultSearchPath` when it has none).
  /// - Returns: how the run ended and the tail of its stderr. Never throws:
  ///   a program that cannot be started is `.couldNotStart` with a sentence.
  static func run(
    _ argv: [String], input: [UInt8], timeout: Duration, environment: [String: String]? = nil
  ) async -> CommandOutcome {
    guard let program = argv.first, !program.isEmpty else {
      return CommandOutcome(end: .couldNotStart("the command is empty: it names no program to run"), stderrTail: "")
    }
    if Task.isCancelled {
      return CommandOutcome(
        end: .couldNotStart("the command \(program) was not started: its run was cancelled"), stderrTail: "")
    }
    let env = environment ?? ProcessInfo.processInfo.environment
    let path: String
    if program.contains("/") {
      path = program
    } else if let found = lookUp(program, in: env["PATH"] ?? defaultSearchPath) {
      path = found
    } else {
      return CommandOutcome(end: .couldNotStart("no program named \"\(program)\" on PATH"), stderrTail: "")
    }

    let child: RunningCommand
    switch spawn(path: path, argv: argv, environment: env) {
    case .failure(let problem):
      return CommandOutcome(end: .couldNotStart(problem.sentence(program: program)), stderrTail: "")
    case .success(let started):
      child = started
    }
    child.start(input: input, timeout: timeout)
    return await withTaskCancellationHandler {
      await withCheckedContinuation { child.whenDone($0) }
    } onCancel: {
      child.cancel()
    }
  }

  /// The search path when the program's environment has no PATH.
  static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

  /// The first executable regular file named `program` in the directories
  /// of `searchPath`. Empty entries (which POSIX reads as the current
  /// directory) are skipped: a daemon should not run what happens to lie
  /// in its working directory.
  static func lookUp(_ program: String, in searchPath: String) -> String? {
    for dir in searchPath.split(separator: ":", omittingEmptySubsequences: true) {
      let candidate = dir.hasSuffix("/") ? "\(dir)\(program)" : "\(dir)/\(program)"
      var info = stat()
      guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
      if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
  }

  /// Why a program could not be started: the step and its errno.
  struct SpawnProblem: Error {
    var step: String
    var code: Int32

    /// A sentence naming the program, for `.couldNotStart`.
    func sentence(program: String) -> String {
      switch (step, code) {
      case ("spawn", ENOENT): return "there is no program at \(program)"
      case ("spawn", EACCES): return "the program \(program) may not be run (permission denied)"
      case ("spawn", ENOEXEC):
        return "\(program) is not a program this system can run (a script needs a #! line)"
      case ("spawn", _): return "could not start the program \(program): \(describe(code))"
      default: return "could not start the program \(program): \(step) failed: \(describe(code))"
      }
    }
  }

  /// The C library's text for an errno value.
  static func describe(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(cString: text)
  }

  /// The signals whose disposition the child gets back to the default: we
  /// (or the CLI) may ignore or handle them, and ignored signals stay
  /// ignored across exec.
  static let signalsToReset: [Int32] = [
    SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2, SIGCHLD,
    SIGTSTP, SIGTTIN, SIGTTOU, SIGXCPU, SIGXFSZ,
  ]

  /// Starts the program with pipes for stdin and stderr (see the type's
  /// documentation for what the child gets).
  static func spawn(path: String, argv: [String], environment: [String: String]) -> Result<
    RunningCommand, SpawnProblem
  > {
    // Through setpriv the spawn itself succeeds whatever `path` is: what it
    // would have refused is refused here, with the same problem.
    if ParentDeath.setpriv != nil, access(path, X_OK) != 0 {
      return .failure(SpawnProblem(step: "spawn", code: errno))
    }
    var opened: [Int32] = []
    func closeOpened() { for fd in opened { close(fd) } }

    // Every descriptor of ours is close-on-exec from birth (pipe2 / O_CLOEXEC),
    // so a child another thread spawns meanwhile cannot inherit one, and at
    // 3 or above, so the dup2 steps below cannot overwrite each other.
    func makePipe() -> (read: Int32, write: Int32)? {
      var fds: [Int32] = [-1, -1]
      if let pipe2 = LibC.pipe2 {
        guard pipe2(&fds, O_CLOEXEC) == 0 else { return nil }
      } else {
        guard pipe(&fds) == 0 else { return nil }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
      }
      let read = aboveStandardStreams(fds[0])
      let write = aboveStandardStreams(fds[1])
      opened += [read, write]
      return (read, write)
    }

    guard let stdinPipe = makePipe() else { return .failure(SpawnProblem(step: "pipe", code: errno)) }
    guard let stderrPipe = makePipe() else {
      let code = errno
      closeOpened()
      return .failure(SpawnProblem(step: "pipe", code: code))
    }
    let devNull = open("/dev/null", O_WRONLY | O_CLOEXEC)
    guard devNull >= 0 else {
      let code = errno
      closeOpened()
      return .failure(SpawnProblem(step: "open /dev/null", code: code))
    }
    opened.append(aboveStandardStreams(devNull))
    let nullFD = opened[opened.count - 1]

    // Our ends never block: the I/O thread polls them.
    _ = fcntl(stdinPipe.write, F_SETFL, fcntl(stdinPipe.write, F_GETFL) | O_NONBLOCK)
    _ = fcntl(stderrPipe.read, F_SETFL, fcntl(stderrPipe.read, F_GETFL) | O_NONBLOCK)
    #if canImport(Darwin)
    _ = fcntl(stdinPipe.write, F_SETNOSIGPIPE, 1)
    #endif

    #if canImport(Darwin)
    var actions: posix_spawn_file_actions_t? = nil
    var attributes: posix_spawnattr_t? = nil
    #else
    var actions = posix_spawn_file_actions_t()
    var attributes = posix_spawnattr_t()
    #endif
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    posix_spawn_file_actions_adddup2(&actions, stdinPipe.read, STDIN_FILENO)
    posix_spawn_file_actions_adddup2(&actions, nullFD, STDOUT_FILENO)
    posix_spawn_file_actions_adddup2(&actions, stderrPipe.write, STDERR_FILENO)
    var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP)
    #if canImport(Darwin)
    // Only the three descriptors above reach the child.
    flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
    #else
    // Descriptors others opened without close-on-exec do not reach the child
    // (glibc 2.34 and later; ours are close-on-exec either way).
    if let closeFrom = LibC.spawnCloseFrom { _ = closeFrom(&actions, STDERR_FILENO + 1) }
    #endif
    posix_spawnattr_setflags(&attributes, Int16(flags))
    posix_spawnattr_setpgroup(&attributes, 0)
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for s in signalsToReset { sigaddset(&defaults, s) }
    posix_spawnattr_setsigdefault(&attributes, &defaults)

    // Through setpriv, on a thread that lives as long as we do, so that the
    // program dies with us even when we are SIGKILLed (see ParentDeath).
    let spawned = ParentDeath.wrapped(path: path, argv: argv)
    let cArguments: [UnsafeMutablePointer<CChar>?] = spawned.argv.map { strdup($0) } + [nil]
    let cEnvironment: [UnsafeMutablePointer<CChar>?] =
      environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for p in cArguments { free(p) }
      for p in cEnvironment { free(p) }
    }
    var pid = pid_t()
    let result = ParentDeath.perform {
      posix_spawn(&pid, spawned.path, &actions, &attributes, cArguments, cEnvironment)
    }
    // The child's ends are the child's now.
    close(stdinPipe.read)
    close(stderrPipe.write)
    close(nullFD)
    guard result == 0 else {
      close(stdinPipe.write)
      close(stderrPipe.read)
      return .failure(SpawnProblem(step: "spawn", code: result))
    }
    // From now until it is reaped, a process that quits at once kills it.
    ChildProcesses.add(pid)
    guard let wake = makePipe() else {
      // Without the wake pipe the run cannot be watched: stop the child.
      let code = errno
      kill(pid, SIGKILL)
      ChildProcesses.remove(pid)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      close(stdinPipe.write)
      close(stderrPipe.read)
      return .failure(SpawnProblem(step: "pipe", code: code))
    }
    _ = fcntl(wake.read, F_SETFL, fcntl(wake.read, F_GETFL) | O_NONBLOCK)
    _ = fcntl(wake.write, F_SETFL, fcntl(wake.write, F_GETFL) | O_NONBLOCK)
    return .success(
      RunningCommand(
        pid: pid, stdinFD: stdinPipe.write, stderrFD: stderrPipe.read, wakeRead: wake.read, wakeWrite: wake.write))
  }

  /// `fd`, or a close-on-exec duplicate of it at 3 or above when it is one
  /// of the standard stream numbers (ours were closed), closing the original.
  static func aboveStandardStreams(_ fd: Int32) -> Int32 {
    guard fd >= 0, fd <= STDERR_FILENO else { return fd }
    let moved = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1)
    guard moved >= 0 else { return fd }
    close(fd)
    return moved
  }
}

/// C library functions Swift's Glibc module leaves out (they are declared
/// only under `_GNU_SOURCE`), looked up at run time; nil where missing.
/// Darwin has neither and needs neither (see `CommandRunner.spawn`).
enum LibC {
  #if canImport(Glibc)
  /// `int pipe2(int fds[2], int flags)`: a pipe born close-on-exec, so no
  /// child spawned by another thread between pipe() and fcntl() inherits it.
  static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32)? =
    symbol("pipe2")
  /// `int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *, int from)`.
  static let spawnCloseFrom:
    (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? =
      symbol("posix_spawn_file_actions_addclosefrom_np")

  private static func symbol<F>(_ name: String) -> F? {
    guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
    return unsafeBitCast(address, to: F.self)
  }
  #else
  static let pipe2: (@convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32)? = nil
  #endif
}

/// One started program: its pid, our ends of its pipes, and the state the
/// I/O thread, the waiter thread and the awaiting task share.
final class RunningCommand: Sendable {
  let pid: pid_t
  /// Our (non-blocking) end of the child's stdin; only the I/O thread uses it.
  let stdinFD: Int32
  /// Our (non-blocking) end of the child's stderr; only the I/O thread uses it.
  let stderrFD: Int32
  /// A pipe that wakes the I/O thread's poll: the exit and cancellation
  /// write a byte to it.
  let wakeRead: Int32
  let wakeWrite: Int32

  struct State {
    /// The waiter saw the exit: from here on the pid may be reaped, and no
    /// signal may be sent to it (the number could be reused).
    var exited = false
    /// The wait status, once reaped (nil when waitpid failed: `reapError`).
    var status: Int32?
    var reapError: Int32?
    var cancelRequested = false
    /// The wake pipe is closed (the run is over).
    var closed = false
    var outcome: CommandOutcome?
    var continuation: CheckedContinuation<CommandOutcome, Never>?
  }
  let state = Locked(State())

  init(pid: pid_t, stdinFD: Int32, stderrFD: Int32, wakeRead: Int32, wakeWrite: Int32) {
    self.pid = pid
    self.stdinFD = stdinFD
    self.stderrFD = stderrFD
    self.wakeRead = wakeRead
    self.wakeWrite = wakeWrite
  }

  /// Starts the waiter and the I/O thread.
  func start(input: [UInt8], timeout: Duration) {
    let waiter = Thread { [self] in waitForExit() }
    waiter.name = "forage-command-wait"
    waiter.start()
    let io = Thread { [self] in runIO(input: input, timeout: timeout) }
    io.name = "forage-command-io"
    io.start()
  }

  /// Resumes `continuation` with the outcome, now or when the run ends.
  func whenDone(_ continuation: CheckedContinuation<CommandOutcome, Never>) {
    let ready: CommandOutcome? = state.withLock {
      if let outcome = $0.outcome { return outcome }
      $0.continuation = continuation
      return nil
    }
    if let ready { continuation.resume(returning: ready) }
  }

  /// Asks the I/O thread to stop the program (the calling task was cancelled).
  func cancel() {
    state.withLock {
      $0.cancelRequested = true
      wakeLocked($0)
    }
  }

  /// Writes a byte to the wake pipe unless the run is over. Call with the
  /// lock held, so the pipe cannot be closed (and its number reused) meanwhile.
  private func wakeLocked(_ s: State) {
    guard !s.closed else { return }
    var byte: UInt8 = 1
    _ = write(wakeWrite, &byte, 1)  // full pipe (EAGAIN): a wake-up is pending anyway
  }

  /// Sends `signal` to the program's process group (or, should it have
  /// left the group, to the program), unless it has already exited.
  private func send(_ signal: Int32) {
    state.withLock {
      guard !$0.exited else { return }
      if kill(-pid, signal) != 0 { kill(pid, signal) }
    }
  }

  /// The waiter thread: waits for the exit without reaping, marks it (no
  /// signals from here on), then reaps and wakes the I/O thread.
  private func waitForExit() {
    var info = siginfo_t()
    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
      if errno != EINTR { break }
    }
    state.withLock { $0.exited = true }
    // Forgotten before it is reaped: once reaped, its number may be reused.
    ChildProcesses.remove(pid)
    // Killed by a process quitting now (a second Ctrl-C): the exit is not
    // the program's, and reporting it would record a failed attempt in the
    // moment before the process ends. This thread waits for that end.
    while ChildProcesses.isQuitting { pause() }
    var status: Int32 = 0
    var result: pid_t
    repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
    let failure: Int32? = result < 0 ? errno : nil
    state.withLock {
      if let failure { $0.reapError = failure } else { $0.status = status }
      wakeLocked($0)
    }
  }

  /// The I/O thread: feeds stdin, drains stderr, keeps the deadline, sends
  /// the signals, and finishes the run once the program is reaped.
  private func runIO(input: [UInt8], timeout: Duration) {
    #if canImport(Glibc)
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
    #endif
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: min(timeout, .seconds(366 * 86_400)))
    var stdinOpen = true
    var written = 0
    var stderrOpen = true
    var tail = StderrTail(limit: CommandRunner.stderrTailLimit)
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    var termSentAt: ContinuousClock.Instant?
    var killSent = false
    var timedOut = false

    func closeStdin() {
      if stdinOpen {
        close(stdinFD)
        stdinOpen = false
      }
    }
    if input.isEmpty { closeStdin() }

    /// One non-blocking read of stderr into the tail; false when nothing
    /// more can be read now (would block, EOF or an error).
    func readStderr() -> Bool {
      guard stderrOpen else { return false }
      let n = buffer.withUnsafeMutableBytes { read(stderrFD, $0.baseAddress, $0.count) }
      if n > 0 {
        buffer.withUnsafeBytes { tail.append(UnsafeRawBufferPointer(rebasing: $0[..<n])) }
        return true
      }
      if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return false }
      close(stderrFD)
      stderrOpen = false
      return false
    }

    func writeStdin() {
      guard stdinOpen else { return }
      let n = input.withUnsafeBytes { raw in
        write(stdinFD, raw.baseAddress! + written, min(raw.count - written, 64 * 1024))
      }
      if n > 0 {
        written += n
        if written == input.count { closeStdin() }
        return
      }
      let code = errno
      if n < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == EINTR) { return }
      // EPIPE (the program closed stdin or exited) or another error: stop feeding.
      if code == EPIPE { Self.discardPendingPipeSignal() }
      closeStdin()
    }

    while true {
      let (reaped, cancelled) = state.withLock { ($0.status != nil || $0.reapError != nil, $0.cancelRequested) }
      if reaped { break }
      let now = clock.now
      if termSentAt == nil && (cancelled || now >= deadline) {
        timedOut = !cancelled
        send(SIGTERM)
        termSentAt = now
      }
      if let sent = termSentAt, !killSent, now >= sent.advanced(by: CommandRunner.killGrace) {
        send(SIGKILL)
        killSent = true
      }
      let next: ContinuousClock.Instant? =
        killSent ? nil : termSentAt.map { $0.advanced(by: CommandRunner.killGrace) } ?? deadline
      let wait = next.map { Self.milliseconds(from: now, to: $0) } ?? -1

      var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
      if stdinOpen { fds.append(pollfd(fd: stdinFD, events: Int16(POLLOUT), revents: 0)) }
      if stderrOpen { fds.append(pollfd(fd: stderrFD, events: Int16(POLLIN), revents: 0)) }
      let ready = poll(&fds, nfds_t(fds.count), wait)
      if ready <= 0 { continue }  // timeout (checked above) or EINTR
      for entry in fds where entry.revents != 0 {
        if entry.fd == wakeRead {
          var drain = [UInt8](repeating: 0, count: 64)
          while read(wakeRead, &drain, drain.count) > 0 {}
        } else if entry.fd == stdinFD && stdinOpen {
          writeStdin()
        } else if entry.fd == stderrFD && stderrOpen {
          _ = readStderr()
        }
      }
    }

    // The program is gone: what it wrote before exiting is in the pipe.
    // Read what is there now, boundedly: a program it started may still
    // hold the pipe open and keep writing.
    closeStdin()
    var reads = 0
    while reads < 64 && readStderr() { reads += 1 }
    if stderrOpen {
      close(stderrFD)
      stderrOpen = false
    }

    let (status, reapError) = state.withLock { ($0.status, $0.reapError) }
    let end: CommandOutcome.End
    if timedOut {
      end = .timedOut
    } else if let status {
      let low = status & 0x7f
      end = low == 0 ? .exited((status >> 8) & 0xff) : .signalled(low)
    } else {
      end = .couldNotStart(
        "could not learn how the program ended: waitpid failed: \(CommandRunner.describe(reapError ?? 0))")
    }
    finish(CommandOutcome(end: end, stderrTail: tail.text()))
  }

  /// Records the outcome, closes the wake pipe and resumes the awaiting task.
  private func finish(_ outcome: CommandOutcome) {
    let waiting: CheckedContinuation<CommandOutcome, Never>? = state.withLock {
      $0.outcome = outcome
      $0.closed = true
      close(wakeRead)
      close(wakeWrite)
      let waiting = $0.continuation
      $0.continuation = nil
      return waiting
    }
    waiting?.resume(returning: outcome)
  }

  /// Takes back a SIGPIPE that a failed write left pending on this thread
  /// (blocked here, so it did nothing), so it cannot surface later.
  private static func discardPendingPipeSignal() {
    #if canImport(Glibc)
    var pending = sigset_t()
    sigpending(&pending)
    guard sigismember(&pending, SIGPIPE) == 1 else { return }
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var now = timespec(tv_sec: 0, tv_nsec: 0)
    _ = sigtimedwait(&pipeSignal, nil, &now)
    #endif
  }

  /// Milliseconds from `now` until `instant`, rounded up, for `poll`.
  private static func milliseconds(from now: ContinuousClock.Instant, to instant: ContinuousClock.Instant) -> Int32 {
    let left = now.duration(to: instant)
    guard left > .zero else { return 0 }
    let (seconds, attoseconds) = left.components
    let ms = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return Int32(clamping: ms)
  }
}

/// The last `limit` bytes of a stream, kept without holding the rest.
struct StderrTail {
  let limit: Int
  private var bytes: [UInt8] = []
  private var dropped = false

  init(limit: Int) { self.limit = limit }

  mutating func append(_ chunk: UnsafeRawBufferPointer) {
    if chunk.count >= limit {
      bytes = Array(UnsafeRawBufferPointer(rebasing: chunk[(chunk.count - limit)...]))
      dropped = true
      return
    }
    bytes.append(contentsOf: chunk)
    if bytes.count > 2 * limit {
      bytes.removeFirst(bytes.count - limit)
      dropped = true
    }
  }

  /// The tail as text: at most `limit` bytes, without a leading partial
  /// UTF-8 character when the cut fell inside one.
  func text() -> String {
    var start = max(0, bytes.count - limit)
    if dropped || start > 0 {
      var skipped = 0
      while start < bytes.count && skipped < 3 && bytes[start] & 0xc0 == 0x80 {
        start += 1
        skipped += 1
      }
    }
    return String(decoding: bytes[start...], as: UTF8.self)
  }
}
