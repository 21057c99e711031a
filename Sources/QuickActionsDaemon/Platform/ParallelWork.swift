import Dispatch

/// CPU-bound work split among threads: reading and parsing a tree of contacts on every CPU.
enum ParallelWork {
    /// Calls `body(worker)` for each worker in `0..<workers` at once — worker 0 on the calling
    /// thread, the others on threads of their own (`qactd-reader`) — and returns when all have
    /// returned. Not libdispatch's `concurrentPerform`: its thread pool, once used, has a monitor
    /// that wakes the process once a second for as long as it lives (see `EventLoopExecution`).
    /// A thread that cannot be started is left out, so `body` must share the work out among
    /// whichever workers run (taking chunks from a shared counter until none is left).
    static func run(workers: Int, _ body: @escaping (Int) -> Void) {
        guard workers > 1 else {
            body(0)
            return
        }
        let work = UncheckedWork(body: body)
        // A semaphore blocks in the kernel; it starts no thread of libdispatch's pool.
        let finished = DispatchSemaphore(value: 0)
        var started = 0
        for worker in 1..<workers {
            do {
                try startDetachedThread(named: "qactd-reader") {
                    work.body(worker)
                    finished.signal()
                }
                started += 1
            } catch {
                continue  // fewer readers share the same chunks
            }
        }
        body(0)
        // Every reader is done with the caller's data once this returns.
        for _ in 0..<started { finished.wait() }
    }
}

/// `body` handed to the reader threads, which share the work through what it captures.
private struct UncheckedWork: @unchecked Sendable {
    let body: (Int) -> Void
}
