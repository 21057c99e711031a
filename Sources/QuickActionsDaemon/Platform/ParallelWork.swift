import Dispatch
import NIOConcurrencyHelpers
import Synchronization

import Glibc

/// CPU-bound work split among threads: reading and parsing a tree of contacts on every CPU.
enum ParallelWork {
    /// Calls `body(worker)` for each worker in `0..<workers` at once — worker 0 on the calling
    /// thread, the others on the reader threads (`qactd-reader`) — and returns when all have
    /// returned. Not libdispatch's `concurrentPerform`: its thread pool, once used, has a monitor
    /// that wakes the process once a second for as long as it lives (see `EventLoopExecution`).
    /// A worker whose thread cannot be started is left out, so `body` must share the work out
    /// among whichever workers run (taking chunks from a shared counter until none is left).
    static func run(workers: Int, _ body: @escaping (Int) -> Void) {
        guard workers > 1 else {
            body(0)
            return
        }
        // Each reader signals once its job returned.
        let finished = DispatchSemaphore(value: 0)
        let handed = readers.hand(workers: 1..<workers, UncheckedWork(body: body), finished: finished)
        body(0)
        // Every reader is done with the caller's data once this returns.
        for _ in 0..<handed { finished.wait() }
    }

    /// `(0..<count).map(transform)` on every CPU: each worker takes the next `chunk` of indices
    /// until none is left, and each result lands in its index's place. `transform` must be safe
    /// to call from several threads at once.
    static func map<Result>(count: Int, chunk: Int, _ transform: @escaping (Int) -> Result) -> [Result] {
        let chunks = (count + chunk - 1) / chunk
        let workers = min(chunks, processors)
        guard workers > 1 else { return (0..<count).map(transform) }
        let nextChunk = ChunkCounter()
        return [Result](unsafeUninitializedCapacity: count) { buffer, initializedCount in
            // Each chunk is taken by one worker only: the slots it initializes are its own.
            let slots = buffer.baseAddress!
            let share: (Int) -> Void = { _ in
                while case let chunkIndex = nextChunk.take(), chunkIndex < chunks {
                    for index in chunkIndex * chunk..<min(count, (chunkIndex + 1) * chunk) {
                        (slots + index).initialize(to: transform(index))
                    }
                }
            }
            run(workers: workers, share)
            initializedCount = count
        }
    }

    /// One worker per CPU the process may run on, at most 8: the work is CPU-bound, and more
    /// threads only compete.
    static let processors: Int = min(8, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))

    private static let readers = ReaderThreads()
}

/// The next chunk for whichever worker asks first.
private final class ChunkCounter: Sendable {
    private let next = Atomic<Int>(0)

    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
}

/// The reader threads, started as a scan first needs them and kept, asleep on a semaphore,
/// for the next one. Kept rather than started per scan: glibc gives each new thread a malloc
/// arena of its own, and what a short-lived reader parsed into its arena stayed resident
/// after the thread was gone (BENCHMARKS.md has the figures); a kept reader reuses its arena.
private final class ReaderThreads: Sendable {
    private struct Job {
        var worker: Int
        var work: UncheckedWork
        var finished: DispatchSemaphore
    }

    private struct State {
        var jobs: [Job] = []
        var threads = 0
    }

    private let state = NIOLockedValueBox(State())
    /// Counts the jobs queued; a reader blocks in `wait` (a futex) until there is one.
    private let queued = DispatchSemaphore(value: 0)

    /// Queues one job per worker for as many readers as run (starting missing ones) and
    /// returns how many were queued.
    func hand(workers: Range<Int>, _ work: UncheckedWork, finished: DispatchSemaphore) -> Int {
        let needed = workers.count
        while state.withLockedValue({ $0.threads }) < needed {
            do {
                try startDetachedThread(named: "qactd-reader") { [self] in serve() }
                state.withLockedValue { $0.threads += 1 }
            } catch {
                break  // fewer readers share the same chunks
            }
        }
        let handed = state.withLockedValue { state in
            let handed = min(needed, state.threads)
            for worker in workers.prefix(handed) { state.jobs.append(Job(worker: worker, work: work, finished: finished)) }
            return handed
        }
        for _ in 0..<handed { queued.signal() }
        return handed
    }

    private func serve() {
        while true {
            queued.wait()
            guard let job = state.withLockedValue({ state -> Job? in
                state.jobs.isEmpty ? nil : state.jobs.removeFirst()
            }) else { continue }
            job.work.body(job.worker)
            job.finished.signal()
        }
    }
}

/// `body` handed to the reader threads, which share the work through what it captures; the
/// caller waits for every one of them before its data goes.
private struct UncheckedWork: @unchecked Sendable {
    let body: (Int) -> Void
}
