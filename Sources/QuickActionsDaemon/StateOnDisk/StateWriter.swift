#if canImport(Glibc)
import Glibc
#endif
import Logging
import QuickActions
import NIOConcurrencyHelpers
import NIOCore
import SystemCalls

/// Writes the state file on a thread of its own (`qactd-state`), so the core actor never
/// waits for a disk: an atomic save (temporary file, fsync, rename, fsync of the folder)
/// takes milliseconds to tens of milliseconds, and while the actor waited the next contact
/// change, `Watch` event and call waited behind it. Swift's cooperative pool is no place for
/// it either: it has as many threads as CPUs, and a blocking fsync there stalls every task.
///
/// The core hands over each new state with `submit` and gets a ticket (a higher ticket is a
/// newer state). Newest state wins: while a write is under way, further states replace one
/// another in a one-slot mailbox, and only the newest is written next, so a burst of changes
/// costs a few writes, not one per change. Who must know that a state reached the disk
/// (`ResignActive`'s `persisted`, the last write at shutdown) awaits `waitUntilWritten(ticket)`
/// outside the actor.
///
/// A failed write keeps the previous file and the state in the mailbox; it is retried after
/// 250 ms, doubling up to 30 s, and at once when a new state comes or someone waits for it.
/// Each distinct failure is logged once. `outcome` tells `Status` what the file holds.
final class StateWriter: Sendable {
    /// Numbers the submitted states, from 1; 0 stands for what the file held at start.
    typealias Ticket = UInt64

    /// What the state file holds, as the writer knows it.
    struct Outcome: Sendable, Equatable {
        /// The newest ticket whose state (or a newer one) the file holds.
        var writtenTicket: Ticket = 0
        /// The generation the file holds (nil: there is no file yet).
        var savedGeneration: UInt64?
        /// Why the last attempt failed, while writes fail.
        var error: String?
    }

    static let firstRetryDelay = Duration.milliseconds(250)
    static let maxRetryDelay = Duration.seconds(30)

    private let shared: Shared
    let stateFile: String

    /// Starts the thread. `onOutcome` runs on it after each attempt (the core's status epoch).
    init(store: StateStore<PersistedState>, logger: Logger, onOutcome: @escaping @Sendable () -> Void) {
        stateFile = store.paths.stateFile
        let wakeUp = WakeUpSocket.make(for: "the state writer", logger: logger)
        shared = Shared(store: store, logger: logger, wakeUp: wakeUp, onOutcome: onOutcome)
        do {
            try startDetachedThread(named: "qactd-state") { [shared] in shared.run() }
        } catch {
            // Without a thread of its own the state is still written, on the caller's thread.
            logger.error("Could not start the state writer's thread (\(error)); writing the state inline.")
            shared.writeInline()
        }
    }

    deinit {
        shared.stop()
    }

    /// Hands over a new state to write; returns its ticket. Never waits. `itemParts`: the texts
    /// of its dynamic items, when they were written as they were derived
    /// (`QuickActionsState.dynamicItemParts`), so the writer need not write them again.
    func submit(_ state: PersistedState, itemParts: [ShortcutItemTexts]? = nil) -> Ticket {
        let (ticket, inline) = shared.mailbox.withLockedValue { mailbox in
            mailbox.lastTicket += 1
            mailbox.newest = Job(ticket: mailbox.lastTicket, state: state, itemParts: itemParts)
            mailbox.attemptWanted = true
            return (mailbox.lastTicket, mailbox.inline)
        }
        if inline { shared.attemptPendingWrite() } else { shared.wakeUp.wake() }
        return ticket
    }

    var outcome: Outcome { shared.mailbox.withLockedValue { $0.outcome } }

    /// True once the file holds the state of `ticket` (or a newer one); false when the first
    /// attempt made for it after this call failed. A state already written answers at once.
    func waitUntilWritten(_ ticket: Ticket) async -> Bool {
        if shared.mailbox.withLockedValue({ $0.outcome.writtenTicket >= ticket }) { return true }
        let inline = shared.mailbox.withLockedValue { $0.inline }
        let loop = EventLoopExecution.currentEventLoop
        let written = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let written: Bool? = shared.mailbox.withLockedValue { mailbox in
                if mailbox.outcome.writtenTicket >= ticket { return true }
                if mailbox.stopped { return false }
                mailbox.waiters.append(Waiter(ticket: ticket, afterAttempt: mailbox.attempts, continuation: continuation, loop: loop))
                // A state that failed before is tried again now rather than at the end of its retry delay.
                mailbox.attemptWanted = true
                return nil
            }
            if let written {
                continuation.resume(returning: written)
            } else if inline {
                shared.attemptPendingWrite()
            } else {
                shared.wakeUp.wake()
            }
        }
        return written
    }

    /// Someone waiting for a ticket: resumed after the first attempt, made after it began
    /// waiting (`afterAttempt`), that wrote its state or a newer one, or that failed to.
    fileprivate struct Waiter {
        var ticket: Ticket
        var afterAttempt: UInt64
        var continuation: CheckedContinuation<Bool, Never>
        /// The event loop it waits on, where it is resumed (`EventLoopExecution.currentEventLoop`).
        var loop: (any EventLoop)?

        func resume(returning written: Bool) {
            guard let loop, !loop.inEventLoop else { return continuation.resume(returning: written) }
            loop.execute { continuation.resume(returning: written) }
        }
    }

    /// A state to write, with its ticket and its items' texts if written already.
    fileprivate struct Job: Sendable {
        var ticket: Ticket
        var state: PersistedState
        var itemParts: [ShortcutItemTexts]?
    }

    fileprivate struct Mailbox: Sendable {
        /// The newest submitted state that the file does not hold yet.
        var newest: Job?
        var lastTicket: Ticket = 0
        var outcome = Outcome()
        /// A new state, or a waiter: write without waiting for the retry delay.
        var attemptWanted = false
        /// Attempts finished so far.
        var attempts: UInt64 = 0
        var waiters: [Waiter] = []
        var stopping = false
        var stopped = false
        /// No thread could be started: `submit` and waiters write on their own thread, and a
        /// failed write is retried only at the next change or waiter (there is no timer).
        var inline = false
    }

    /// What the thread and the owner share. The store is the thread's alone (`store` is only
    /// touched by `attemptPendingWrite`, which runs on one thread at a time: the writer's, or
    /// the caller's under `inline`, serialised by `writing`).
    fileprivate final class Shared: @unchecked Sendable {
        // NIO's pthread-based locks, not `Synchronization.Mutex`: ThreadSanitizer (run by
        // `make check`) cannot see a contended `Mutex` handed over in the kernel and reports
        // false races (see VarlinkServer).
        let mailbox: NIOLockedValueBox<Mailbox>
        let wakeUp: WakeUpSocket
        private let logger: Logger
        private let onOutcome: @Sendable () -> Void
        private let writing = NIOLock()
        private var store: StateStore<PersistedState>
        private var retryDelay = StateWriter.firstRetryDelay
        private var retryAt: ContinuousClock.Instant?

        init(store: StateStore<PersistedState>, logger: Logger, wakeUp: WakeUpSocket, onOutcome: @escaping @Sendable () -> Void) {
            self.store = store
            self.logger = logger
            self.wakeUp = wakeUp
            self.onOutcome = onOutcome
            mailbox = NIOLockedValueBox(Mailbox(outcome: Outcome(savedGeneration: store.lastPersisted?.generation)))
        }

        func writeInline() {
            mailbox.withLockedValue { $0.inline = true }
        }

        func stop() {
            mailbox.withLockedValue { $0.stopping = true }
            wakeUp.wake()
        }

        /// The thread: sleeps in `poll` until a state comes or a retry is due, writes the
        /// newest, and at `stop` writes what is still pending once before it ends.
        func run() {
            while true {
                let (due, stopping) = mailbox.withLockedValue { mailbox in
                    let due = mailbox.newest != nil && (mailbox.attemptWanted || mailbox.stopping || retryAt.map { .now >= $0 } ?? false)
                    return (due, mailbox.stopping)
                }
                if due {
                    attemptPendingWrite()
                    if stopping { break }
                    continue
                }
                if stopping { break }
                sleepUntilWokenOrRetryDue()
            }
            let abandoned = mailbox.withLockedValue { mailbox in
                mailbox.stopped = true
                defer { mailbox.waiters = [] }
                return mailbox.waiters
            }
            for waiter in abandoned { waiter.continuation.resume(returning: false) }
        }

        // Closed only once neither the thread nor the owner holds this any more: closed by the
        // thread as it ends, a wake-up sent by `stop` just after could reach a reused descriptor.
        deinit {
            wakeUp.close()
        }

        private func sleepUntilWokenOrRetryDue() {
            var none: [pollfd] = []
            wakeUp.sleep(polling: &none, timeoutMilliseconds: WakeUpSocket.milliseconds(until: retryAt))
        }

        /// Writes the newest pending state, records the outcome and resumes whom it answers.
        func attemptPendingWrite() {
            writing.withLock {
                guard let job = mailbox.withLockedValue({ mailbox -> Job? in
                    mailbox.attemptWanted = false
                    return mailbox.newest
                }) else { return }
                var failure: String?
                var wrote = false
                // The state the file held until now is freed only after the waiters are answered:
                // releasing a thousand items is a tenth of a write, and nobody needs to wait for it.
                let replaced = store.lastPersisted
                defer { withExtendedLifetime(replaced) {} }
                do {
                    wrote = try store.saveIfChanged(job.state, itemParts: job.itemParts)
                } catch {
                    failure = String(describing: error)
                }
                let savedGeneration = store.lastPersisted?.generation
                let (answered, previousError) = mailbox.withLockedValue { mailbox in
                    mailbox.attempts += 1
                    let previousError = mailbox.outcome.error
                    mailbox.outcome.savedGeneration = savedGeneration
                    mailbox.outcome.error = failure
                    var answered: [(Waiter, Bool)] = []
                    if failure == nil {
                        mailbox.outcome.writtenTicket = max(mailbox.outcome.writtenTicket, job.ticket)
                        if mailbox.newest?.ticket == job.ticket { mailbox.newest = nil }
                    }
                    let attempt = mailbox.attempts
                    let writtenTicket = mailbox.outcome.writtenTicket
                    mailbox.waiters.removeAll { waiter in
                        if writtenTicket >= waiter.ticket {
                            answered.append((waiter, true))
                            return true
                        }
                        if failure != nil, job.ticket >= waiter.ticket, attempt > waiter.afterAttempt {
                            answered.append((waiter, false))
                            return true
                        }
                        return false
                    }
                    return (answered, previousError)
                }
                // `Status` learns the outcome before anyone is answered; the log waits until they are.
                onOutcome()
                for (waiter, written) in answered { waiter.resume(returning: written) }
                store.releaseReplaced()
                report(job: job, wrote: wrote, failure: failure, previousError: previousError)
            }
        }

        private func report(job: Job, wrote: Bool, failure: String?, previousError: String?) {
            let path: Logger.Metadata = ["QACTD_PATH": .string(store.paths.stateFile)]
            guard let failure else {
                retryAt = nil
                retryDelay = StateWriter.firstRetryDelay
                if wrote { logger.debug("Saved state, generation \(job.state.generation).", metadata: path) }
                if previousError != nil {
                    logger.notice("Writing the state file '\(store.paths.stateFile)' works again; saved generation \(job.state.generation).", metadata: path)
                }
                return
            }
            // Each attempt names a new temporary file: a retry that fails the same way is not logged again.
            func sameFailure(_ text: String) -> String { text.replacing(#/\.tmp-\d+-\d+/#, with: ".tmp") }
            if previousError.map(sameFailure) != sameFailure(failure) {
                logger.error("Could not save the state, keeping the previous file and the in-memory set (generation \(job.state.generation)); retrying: \(failure)",
                             metadata: path)
            }
            retryAt = .now + retryDelay
            retryDelay = min(retryDelay * 2, StateWriter.maxRetryDelay)
        }
    }
}
