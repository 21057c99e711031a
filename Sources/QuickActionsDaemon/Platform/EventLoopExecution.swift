import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Where the daemon's Swift tasks run and how they wait: on SwiftNIO's event loops (the
/// threads that already serve the socket), never on Swift's default executor.
///
/// Why: on Linux the default executor is libdispatch's thread pool, and once any task has run
/// there, libdispatch's pool monitor wakes the process once a second for as long as it lives —
/// a daemon that sits in every session would never sleep. An event loop sleeps in `epoll`
/// until a socket, a timer or a job needs it. So the daemon's root task runs with this
/// executor as its preference, which its child tasks and the actors they call inherit; a task
/// a thread of ours hands work to is made here, with it (`runBlocking`); and timers
/// are the event loops' own (`sleep`, `schedule`), not `Task.sleep`, which would wake a
/// libdispatch thread.
enum EventLoopExecution {
    /// The event loops every daemon task runs on.
    static let executor = EventLoopTaskExecutor(group: MultiThreadedEventLoopGroup.singleton)

    /// Runs `operation` on the event loops and blocks the calling thread until it returns: the
    /// process's main thread running the daemon's root task, or a thread of ours (a watcher's)
    /// handing its work to the core. Never call it from an event loop.
    static func runBlocking<Result: Sendable>(_ operation: sending @escaping () async -> Result) -> Result {
        let done = ConditionLock(value: false)
        let outcome = NIOLockedValueBox<Result?>(nil)
        // Unstructured, but the calling thread waits for it right here, so it outlives nothing.
        Task(executorPreference: executor) {
            let result = await operation()
            outcome.withLockedValue { $0 = result }
            done.lock()
            done.unlock(withValue: true)
        }
        done.lock(whenValue: true)
        done.unlock()
        return outcome.withLockedValue { $0! }
    }

    /// The event loop running the calling thread, nil on a thread of ours. A thread of ours
    /// that resumes a task waiting for it resumes it on the loop it waited on: resumed from
    /// elsewhere, the task went to whichever loop came next in turn, and from there hopped
    /// again to its connection's loop to reply, a second thread woken per answer.
    static var currentEventLoop: (any EventLoop)? { MultiThreadedEventLoopGroup.currentEventLoop }

    /// Sleeps `duration` on an event loop's timer; throws `CancellationError` when the task is cancelled.
    static func sleep(for duration: Duration) async throws {
        let scheduled = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(duration)) {}
        do {
            try await withTaskCancellationHandler {
                try await scheduled.futureResult.get()
            } onCancel: {
                scheduled.cancel()
            }
        } catch {
            throw CancellationError()
        }
    }

    /// Runs `action` on an event loop after `duration`; cancel the result to stop it.
    static func schedule(in duration: Duration, _ action: @escaping @Sendable () -> Void) -> Scheduled<Void> {
        MultiThreadedEventLoopGroup.singleton.any().scheduleTask(in: TimeAmount(duration), action)
    }
}

/// Runs each job on one of `group`'s event loops (the one it is already on, when it is on one).
final class EventLoopTaskExecutor: TaskExecutor {
    let group: any EventLoopGroup

    init(group: any EventLoopGroup) {
        self.group = group
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        group.any().execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
