import Glibc
import Logging
import NIOConcurrencyHelpers
import SystemCalls

/// A thread of its own for work that must not run on the core's actor or the event loops
/// (a write with its fsync, an sd-bus call, inotify), fed through a mailbox: other threads
/// change the `Mail` under the lock and wake the thread, which sleeps in
/// `WakeUpSocket.sleep` on the wake-up socket plus the descriptors its owner polls. The mail
/// is the owner's: the newest value (a burst replaces, the thread does the last one) or a
/// queue (requests handled in order). This is the one place that starts such a thread,
/// wakes it, stops it and answers whoever still waits on it when it ends.
///
/// The owner's body runs on the thread, typically
/// `while true { let stopping = thread.isStopping; …take mail, work…; if stopping { break }; thread.sleep(…) }`:
/// reading `isStopping` before taking the mail makes the last round see everything posted
/// before the stop, and `sleep` no longer waits once a stop was asked for.
final class MailboxThread<Mail: Sendable>: Sendable {
    private struct State: Sendable {
        var mail: Mail
        /// The running thread's; made when it starts, closed under the lock when it ends, so a
        /// wake-up never reaches a descriptor number that was closed and given again.
        var wakeUp: WakeUpSocket?
        var started = false
        var stopRequested = false
        var ended = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        /// Replies handed out by `ask` and not answered yet; answered with nil when the thread ends.
        var outstanding: [UInt64: @Sendable () -> Void] = [:]
        var lastReply: UInt64 = 0
    }

    let name: String
    /// How logs name the thread's owner ("the state writer").
    let purpose: String
    private let logger: Logger
    private let state: NIOLockedValueBox<State>

    /// `name` is the thread's (as `ps -L` shows it), `purpose` how logs name it ("the state writer").
    init(named name: String, for purpose: String, mail: Mail, logger: Logger) {
        self.name = name
        self.purpose = purpose
        self.logger = logger
        state = NIOLockedValueBox(State(mail: mail))
    }

    // MARK: - The owner's side

    /// Reads or changes the mail under the lock, without waking the thread.
    func withMail<Result>(_ body: (inout Mail) -> Result) -> Result {
        state.withLockedValue { body(&$0.mail) }
    }

    /// Changes the mail and wakes the thread, if a thread is there to see it (started and not
    /// ended); false, with `body` not called, otherwise. Mail posted after a stop was asked for
    /// may come after the thread's last round.
    @discardableResult
    func post(_ body: (inout Mail) -> Void) -> Bool {
        state.withLockedValue { state in
            guard state.started, !state.ended else { return false }
            body(&state.mail)
            state.wakeUp?.wake()
            return true
        }
    }

    /// Wakes the thread (nothing when none runs).
    func wake() {
        state.withLockedValue { $0.wakeUp?.wake() }
    }

    /// Hands the thread a request someone waits on: `enqueue` runs under the lock while a
    /// thread is there (started and not ended) and either answers at once (a value) or keeps
    /// the reply in the mail for the thread (nil). Returns the answer; nil when no thread
    /// takes requests, or when it ended before answering.
    func ask<Answer: Sendable>(_ enqueue: (inout Mail, MailboxReply<Answer>) -> Answer?) async -> Answer? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Answer?, Never>) in
            // Not queued: answered now, with nil when no thread takes requests.
            let (queued, answer) = state.withLockedValue { state -> (Bool, Answer?) in
                guard state.started, !state.ended else { return (false, nil) }
                state.lastReply += 1
                let identifier = state.lastReply
                let reply = MailboxReply(continuation: continuation) { [self] in settle(identifier) }
                if let now = enqueue(&state.mail, reply) { return (false, now) }
                state.outstanding[identifier] = { continuation.resume(returning: nil) }
                state.wakeUp?.wake()
                return (true, nil)
            }
            if !queued { continuation.resume(returning: answer) }
        }
    }

    /// Whether a stop was asked for (or the thread ended, or will never start).
    var isStopping: Bool { state.withLockedValue { $0.stopRequested || $0.ended } }

    /// Whether the thread was started and has not ended.
    var isRunning: Bool { state.withLockedValue { $0.started && !$0.ended } }

    /// Starts the thread running `body` (`body` returns once `isStopping`); a thread started
    /// before is only woken, and none starts once a stop was asked for. Throws when no thread,
    /// or no wake-up socket for it, can be created: nothing was started, and a later call tries
    /// again (each owner has its way to do without the thread meanwhile).
    func start(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        let startNow = state.withLockedValue { state -> Result<Bool, SystemCallError> in
            guard !state.started, !state.stopRequested, !state.ended else {
                state.wakeUp?.wake()
                return .success(false)
            }
            do throws(SystemCallError) {
                state.wakeUp = try WakeUpSocket()
            } catch {
                return .failure(error)
            }
            state.started = true
            return .success(true)
        }
        guard try startNow.get() else { return }
        do {
            try startDetachedThread(named: name) { [self] in
                body()
                end()
            }
        } catch {
            state.withLockedValue { state in
                state.started = false
                state.wakeUp?.close()
                state.wakeUp = nil
            }
            throw error
        }
    }

    /// Asks the thread to stop and returns at once; a thread never started never will.
    func requestStop() {
        state.withLockedValue { state in
            state.stopRequested = true
            if !state.started { state.ended = true }
            state.wakeUp?.wake()
        }
    }

    /// Asks the thread to stop and returns once it has ended (at once when none runs).
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waits = state.withLockedValue { state -> Bool in
                guard state.started, !state.ended else { return false }
                // Resumed by the thread's end, which may come before the request below.
                state.stopWaiters.append(continuation)
                return true
            }
            requestStop()
            if !waits { continuation.resume() }
        }
    }

    // MARK: - The thread's side

    /// Sleeps until the owner wakes the thread, one of `descriptors` is ready (their `revents`
    /// say which) or `timeoutMilliseconds` pass (-1: no limit). Does not wait once a stop was
    /// asked for, so a last round never sleeps through it.
    func sleep(polling descriptors: inout [pollfd], timeoutMilliseconds: Int32) {
        let (wakeUp, stopping) = state.withLockedValue { ($0.wakeUp, $0.stopRequested) }
        // Made before the thread starts and closed after its body returned: there while it runs.
        guard let wakeUp else { return }
        let (ready, error) = wakeUp.sleep(polling: &descriptors, timeoutMilliseconds: stopping ? 0 : timeoutMilliseconds)
        if ready < 0 && error != EINTR {
            // Not expected with valid descriptors; backs off instead of spinning.
            logger.error("poll() in \(purpose) failed: \(errnoText(error)).")
            usleep(100_000)
        }
    }

    private func end() {
        let (waiters, unanswered) = state.withLockedValue { state in
            state.ended = true
            state.stopRequested = true
            state.wakeUp?.close()
            state.wakeUp = nil
            defer {
                state.stopWaiters = []
                state.outstanding = [:]
            }
            return (state.stopWaiters, Array(state.outstanding.values))
        }
        for answer in unanswered { answer() }
        for waiter in waiters { waiter.resume() }
    }

    /// Takes a reply out of the outstanding ones; false when it was answered already.
    private func settle(_ identifier: UInt64) -> Bool {
        state.withLockedValue { $0.outstanding.removeValue(forKey: identifier) != nil }
    }
}

/// What someone awaiting `MailboxThread.ask` is owed: the thread answers it once; a reply
/// still unanswered when the thread ends is answered with nil by the thread's end.
struct MailboxReply<Answer: Sendable>: Sendable {
    fileprivate let continuation: CheckedContinuation<Answer?, Never>
    /// Takes the reply out of the thread's outstanding ones; false when it was answered already.
    fileprivate let settle: @Sendable () -> Bool

    /// Resumes the waiter with `answer` (nothing when it was answered already).
    func answer(_ answer: Answer) {
        if settle() { continuation.resume(returning: answer) }
    }
}

extension MailboxReply where Answer == Void {
    func answer() { answer(()) }
}
