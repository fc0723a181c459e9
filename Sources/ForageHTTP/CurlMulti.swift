#if canImport(CCurl)
import CCurl
import ForageSupport
import Foundation

/// One libcurl multi handle driven by one event-loop thread.
///
/// Async callers configure a ``CurlEasy`` and submit it with a continuation; the loop
/// adds it to the multi handle, runs `curl_multi_perform`/`curl_multi_poll`, and
/// resumes the continuation when libcurl reports the transfer done. Submissions and
/// cancellations go through a lock-protected queue; `curl_multi_wakeup` interrupts the
/// poll only when the loop sleeps in it. Connections (and HTTP/2 streams) are reused
/// through the multi handle's connection cache.
///
/// `@unchecked Sendable` is safe: `multi` and `active` are touched only by the loop
/// thread (and by `deinit`, after the thread ended); everything else is in `shared`.
///
/// - SeeAlso: <https://curl.se/libcurl/c/libcurl-multi.html>
final class CurlMulti: @unchecked Sendable {
  private struct Shared {
    var pending: [CurlEasy] = []
    var cancels: [(CurlEasy, UInt64)] = []
    var pool: [CurlEasy] = []
    var nextID: UInt64 = 1
    var jobs: [UnownedJob] = []
    var sleeping = false
    var stopping = false
    var stopped = false
  }

  private let multi: UnsafeMutableRawPointer
  private let shared = Locked(Shared())
  private var active: [UnsafeMutableRawPointer: CurlEasy] = [:]
  private let poolLimit = 256

  private static let globalInit: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK

  /// The loop thread, recorded before `init` returns and never changed.
  private var loopThread = pthread_self()

  init() {
    _ = Self.globalInit
    multi = curl_multi_init()
    let started = DispatchSemaphore(value: 0)
    let thread = Thread { [self] in
      loopThread = pthread_self()
      started.signal()
      run()
    }
    thread.name = "forage-curl"
    thread.start()
    started.wait()
  }

  /// True when called on this loop's thread.
  var isCurrentThread: Bool { pthread_equal(loopThread, pthread_self()) != 0 }

  deinit {
    active.removeAll()
    curl_multi_cleanup(multi)
  }

  /// Asks the loop to finish its transfers and end; the multi handle is freed when
  /// the last reference goes.
  func shutdown() {
    shared.withLock { $0.stopping = true }
    curl_multi_wakeup(multi)
  }

  /// A reset easy handle from the pool, or a new one, tagged with a fresh transfer id.
  func acquire() -> (CurlEasy, UInt64)? {
    let reused = shared.withLock { state -> (CurlEasy?, UInt64) in
      let id = state.nextID
      state.nextID += 1
      return (state.pool.popLast(), id)
    }
    guard let easy = reused.0 ?? CurlEasy() else { return nil }
    shared.withLock { _ in
      easy.transferID = reused.1
      easy.cancelRequested = false
    }
    return (easy, reused.1)
  }

  /// Hands a configured transfer to the loop; `easy.continuation` must be set.
  func submit(_ easy: CurlEasy) {
    let (cancelled, wake) = shared.withLock { state -> (Bool, Bool) in
      if easy.cancelRequested { return (true, false) }
      state.pending.append(easy)
      return (false, state.sleeping)
    }
    if cancelled {
      let continuation = easy.continuation
      recycle(easy)
      continuation?.resume(throwing: FetchError.cancelled(host: nil))
    } else if wake {
      curl_multi_wakeup(multi)
    }
  }

  /// Aborts the transfer `id` if it is still queued or running.
  func cancel(_ easy: CurlEasy, id: UInt64) {
    let wake = shared.withLock { state -> Bool in
      guard easy.transferID == id else { return false }
      easy.cancelRequested = true
      state.cancels.append((easy, id))
      return state.sleeping
    }
    if wake { curl_multi_wakeup(multi) }
  }

  /// Returns a handle to the pool (or frees it when the pool is full).
  private func recycle(_ easy: CurlEasy) {
    easy.reset()
    shared.withLock { state in
      easy.transferID = 0
      if state.pool.count < poolLimit { state.pool.append(easy) }
    }
  }

  private func finish(_ easy: CurlEasy, _ result: Result<Response, FetchError>) {
    let continuation = easy.continuation
    recycle(easy)
    continuation?.resume(with: result.mapError { $0 as any Error })
  }

  /// Runs `job` on the loop thread (see the `TaskExecutor` conformance).
  fileprivate func enqueueJob(_ job: UnownedJob) {
    let (accepted, wake) = shared.withLock { state -> (Bool, Bool) in
      if state.stopped { return (false, false) }
      state.jobs.append(job)
      return (true, state.sleeping)
    }
    if !accepted {
      // The loop has ended: the job still has to run somewhere.
      globalConcurrentExecutor.enqueue(job)
    } else if wake {
      curl_multi_wakeup(multi)
    }
  }

  /// The event loop.
  private func run() {
    var running: Int32 = 0
    while true {
      // Tasks that prefer this executor: usually callers resumed by the previous
      // iteration, which submit their next transfer without a thread hop.
      let jobs = shared.withLock { state in
        defer { state.jobs.removeAll(keepingCapacity: true) }
        return state.jobs
      }
      for job in jobs {
        job.runSynchronously(on: asUnownedTaskExecutor())
      }

      let (pending, cancels, stopping) = shared.withLock { state in
        defer {
          state.pending.removeAll(keepingCapacity: true)
          state.cancels.removeAll(keepingCapacity: true)
        }
        // Pending transfers cancelled before they started never reach libcurl.
        let start = state.pending.filter { !$0.cancelRequested }
        let dropped = state.pending.filter { $0.cancelRequested }
        return (start, (state.cancels, dropped), state.stopping)
      }
      for easy in cancels.1 {
        finish(easy, .failure(.cancelled(host: easy.url?.host)))
      }
      for easy in pending {
        if curl_multi_add_handle(multi, easy.handle) == CURLM_OK {
          active[easy.handle] = easy
        } else {
          finish(easy, .failure(FetchError(
                .transport, host: easy.url?.host, "the request to \(easy.url?.host ?? "the server") could not be started",
                detail: "curl_multi_add_handle failed")))
        }
      }
      for (easy, id) in cancels.0 where active[easy.handle] === easy && easy.transferID == id {
        curl_multi_remove_handle(multi, easy.handle)
        active[easy.handle] = nil
        finish(easy, .failure(.cancelled(host: easy.url?.host)))
      }

      curl_multi_perform(multi, &running)
      var left: Int32 = 0
      while let message = curl_multi_info_read(multi, &left) {
        guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle,
          let easy = active.removeValue(forKey: handle)
        else { continue }
        let code = message.pointee.data.result
        curl_multi_remove_handle(multi, handle)
        finish(easy, easy.result(code))
      }

      let (sleep, stop) = shared.withLock { state -> (Bool, Bool) in
        let idle = state.pending.isEmpty && state.cancels.isEmpty && state.jobs.isEmpty
        if stopping && active.isEmpty && idle {
          state.stopped = true
          return (false, true)
        }
        state.sleeping = idle
        return (idle, false)
      }
      if stop { break }
      if sleep {
        curl_multi_poll(multi, nil, 0, 1000, nil)
        shared.withLock { $0.sleeping = false }
      }
    }
    shared.withLock { $0.pool.removeAll() }
  }
}

/// The loop thread is also a task executor: a task that prefers it
/// (`withTaskExecutorPreference(transport.taskExecutor)`) is resumed on the loop thread
/// right after its transfer completes and submits its next transfer without waking
/// another thread, which is what the fetch benchmark measures.
extension CurlMulti: TaskExecutor {
  func enqueue(_ job: consuming ExecutorJob) {
    enqueueJob(UnownedJob(job))
  }

  func asUnownedTaskExecutor() -> UnownedTaskExecutor {
    UnownedTaskExecutor(ordinary: self)
  }
}
#endif
