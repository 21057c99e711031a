import Glibc
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
        shared = Shared(store: store, logger: logger, onOutcome: onOutcome)
        do {
            try shared.thread.start { [shared] in shared.run() }
        } catch {
            // Without a thread of its own the state is still written, on the caller's thread.
            logger.error("Could not start the state writer's thread (\(error)); writing the state inline.")
            shared.writeInline()
        }
    }

    deinit {
        shared.thread.requestStop()
    }

    /// Hands over a new state to write; returns its ticket. Never waits.
    func submit(_ state: PersistedState) -> Ticket {
        let (ticket, inline) = shared.thread.withMail { mailbox in
            mailbox.lastTicket += 1
            mailbox.newest = Job(ticket: mailbox.lastTicket, state: state)
            mailbox.attemptWanted = true
            return (mailbox.lastTicket, mailbox.inline)
        }
        if inline { shared.attemptPendingWrite() } else { shared.thread.wake() }
        return ticket
    }

    var outcome: Outcome { shared.thread.withMail { $0.outcome } }

    /// True once the file holds the state of `ticket` (or a newer one); false when the first
    /// attempt made for it after this call failed. A state already written answers at once.
    func waitUntilWritten(_ ticket: Ticket) async -> Bool {
        let loop = EventLoopExecution.currentEventLoop
        let answer = await shared.thread.ask { mailbox, reply -> Bool? in
            if mailbox.outcome.writtenTicket >= ticket { return true }
            mailbox.waiters.append(Waiter(ticket: ticket, afterAttempt: mailbox.attempts, reply: reply, loop: loop))
            // A state that failed before is tried again now rather than at the end of its retry delay.
            mailbox.attemptWanted = true
            return nil
        }
        if let answer { return answer }
        // No thread: written here (without one, or never again once the writer stopped).
        if shared.thread.withMail({ $0.inline }) { shared.attemptPendingWrite() }
        return outcome.writtenTicket >= ticket
    }

    /// Someone waiting for a ticket: answered after the first attempt, made after it began
    /// waiting (`afterAttempt`), that wrote its state or a newer one, or that failed to.
    fileprivate struct Waiter: Sendable {
        var ticket: Ticket
        var afterAttempt: UInt64
        var reply: MailboxReply<Bool>
        /// The event loop it waits on, where it is resumed (`EventLoopExecution.currentEventLoop`).
        var loop: (any EventLoop)?

        func resume(returning written: Bool) {
            guard let loop, !loop.inEventLoop else { return reply.answer(written) }
            loop.execute { reply.answer(written) }
        }
    }

    /// A state to write, with its ticket.
    fileprivate struct Job: Sendable {
        var ticket: Ticket
        var state: PersistedState
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
        /// No thread could be started: `submit` and waiters write on their own thread, and a
        /// failed write is retried only at the next change or waiter (there is no timer).
        var inline = false
    }

    /// What the thread and the owner share. The store is the thread's alone (`store` is only
    /// touched by `attemptPendingWrite`, which runs on one thread at a time: the writer's, or
    /// the caller's under `inline`, serialised by `writing`).
    fileprivate final class Shared: @unchecked Sendable {
        /// The `qactd-state` thread and its one-slot mailbox.
        let thread: MailboxThread<Mailbox>
        private let logger: Logger
        private let onOutcome: @Sendable () -> Void
        // NIO's pthread-based lock, not `Synchronization.Mutex`: ThreadSanitizer (run by
        // `make check`) cannot see a contended `Mutex` handed over in the kernel and reports
        // false races (see VarlinkServer).
        private let writing = NIOLock()
        private var store: StateStore<PersistedState>
        private var retryDelay = StateWriter.firstRetryDelay
        private var retryAt: ContinuousClock.Instant?

        init(store: StateStore<PersistedState>, logger: Logger, onOutcome: @escaping @Sendable () -> Void) {
            self.store = store
            self.logger = logger
            self.onOutcome = onOutcome
            thread = MailboxThread(
                named: "qactd-state", for: "the state writer",
                mail: Mailbox(outcome: Outcome(savedGeneration: store.lastPersisted?.generation)), logger: logger)
        }

        func writeInline() {
            thread.withMail { $0.inline = true }
        }

        /// The thread: sleeps in `poll` until a state comes or a retry is due, writes the
        /// newest, and at the stop writes what is still pending once before it ends.
        func run() {
            while true {
                let stopping = thread.isStopping
                let due = thread.withMail { mailbox in
                    mailbox.newest != nil && (mailbox.attemptWanted || stopping || retryAt.map { .now >= $0 } ?? false)
                }
                if due { attemptPendingWrite() }
                if stopping { break }
                var none: [pollfd] = []
                thread.sleep(polling: &none, timeoutMilliseconds: WakeUpSocket.milliseconds(until: retryAt))
            }
        }

        /// Writes the newest pending state, records the outcome and resumes whom it answers.
        func attemptPendingWrite() {
            writing.withLock {
                guard let job = thread.withMail({ mailbox -> Job? in
                    mailbox.attemptWanted = false
                    return mailbox.newest
                }) else { return }
                var failure: String?
                var wrote = false
                do {
                    wrote = try store.saveIfChanged(job.state)
                } catch {
                    failure = String(describing: error)
                }
                let savedGeneration = store.lastPersisted?.generation
                let (answered, previousError) = thread.withMail { mailbox in
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
