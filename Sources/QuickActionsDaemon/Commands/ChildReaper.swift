import CLinux
import Glibc
import Logging
import SystemCalls

/// The one way the daemon waits for a program it started itself: every child's pidfd (and the
/// reading end of its stderr, when it has one) is polled by one `MailboxThread`, `qactd-reaper`,
/// asleep until a child exits or writes; new children come to it as mail. No thread waits for
/// one command, so a command that never ends costs a descriptor or two, not a thread. Started
/// with the first child.
///
/// A child whose pidfd cannot be opened (a kernel without `pidfd_open`) is looked at with
/// `waitpid(WNOHANG)` once a second instead.
final class ChildReaper: Sendable {
    /// How much of a child's stderr is kept for the log.
    static let standardErrorTailBytes = 2048

    /// What a child came to: `waitpid`'s status and the end of what it wrote to stderr.
    typealias OnExit = @Sendable (_ waitStatus: Int32, _ standardErrorTail: String) -> Void

    private struct Child: Sendable {
        let pid: pid_t
        /// -1 without one.
        let pidfd: Int32
        /// The reading end of its stderr (non-blocking), -1 when its stderr is not ours to read.
        var standardError: Int32
        var tail: [UInt8] = []
        let onExit: OnExit
    }

    private struct Mail: Sendable {
        /// Children handed over and not taken by the thread yet.
        var arriving: [Child] = []
        /// Children being watched, for tests and `Status`.
        var watching = 0
    }

    private let thread: MailboxThread<Mail>
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
        thread = MailboxThread(named: "qactd-reaper", for: "the reaper thread", mail: Mail(), logger: logger)
    }

    /// Children started and not yet reaped.
    var count: Int { thread.withMail { $0.watching } }

    /// Watches `pid` (a child of this process) until it exits, reading `standardError` (a pipe's
    /// reading end, which the reaper closes) meanwhile; then calls `onExit` on the reaper thread.
    func watch(_ pid: pid_t, standardError: Int32? = nil, onExit: @escaping OnExit) {
        let pidfd = CLinux_pidfdOpen(pid)
        if pidfd < 0 {
            logger.debug("No pidfd for pid \(pid) (\(errnoText(errno))); it is looked at once a second.")
        }
        if let standardError { _ = fcntl(standardError, F_SETFL, fcntl(standardError, F_GETFL) | O_NONBLOCK) }
        let child = Child(pid: pid, pidfd: pidfd, standardError: standardError ?? -1, onExit: onExit)
        thread.withMail { mail in
            mail.arriving.append(child)
            mail.watching += 1
        }
        do {
            // Only wakes the thread when it runs already.
            try thread.start { [self] in run() }
        } catch {
            // The children wait in the mailbox (as zombies once they exit) until a later child
            // tries again to start the thread.
            logger.error("Could not start the reaper thread (\(errnoText(error.errno))); pid \(pid) is not reaped yet.")
        }
    }

    // MARK: - The reaper thread

    private func run() {
        var children: [Child] = []
        // Nothing asks the reaper to stop: it reports each child's end however late it comes.
        while !thread.isStopping {
            children += thread.withMail { mail in
                defer { mail.arriving = [] }
                return mail.arriving
            }
            var descriptors: [pollfd] = []
            var owners: [(child: Int, isPidfd: Bool)] = []
            var withoutPidfd = false
            for (index, child) in children.enumerated() {
                if child.pidfd >= 0 {
                    descriptors.append(pollfd(fd: child.pidfd, events: Int16(POLLIN), revents: 0))
                    owners.append((index, true))
                } else {
                    withoutPidfd = true
                }
                if child.standardError >= 0 {
                    descriptors.append(pollfd(fd: child.standardError, events: Int16(POLLIN), revents: 0))
                    owners.append((index, false))
                }
            }
            thread.sleep(polling: &descriptors, timeoutMilliseconds: withoutPidfd ? 1000 : -1)
            var exited = Set<Int>()
            for (slot, owner) in owners.enumerated() where descriptors[slot].revents != 0 {
                if owner.isPidfd {
                    exited.insert(owner.child)
                } else {
                    readAvailable(&children[owner.child])
                }
            }
            for index in children.indices where children[index].pidfd < 0 {
                var status: Int32 = 0
                if waitpid(children[index].pid, &status, WNOHANG) == children[index].pid {
                    finish(&children[index], status: status)
                    exited.insert(index)
                }
            }
            for index in exited.sorted(by: >) {
                if children[index].pidfd >= 0 { reap(&children[index]) }
                children.remove(at: index)
            }
        }
    }

    /// Reaps the child (at once when its pidfd said it exited), reads what is already in its
    /// stderr — a child it left behind may hold the pipe open for as long as it runs, so the
    /// end of the pipe is not waited for — and reports.
    private func reap(_ child: inout Child) {
        var status: Int32 = 0
        _ = try? retryingSystemCall("waitpid") { waitpid(child.pid, &status, 0) }
        finish(&child, status: status)
    }

    private func finish(_ child: inout Child, status: Int32) {
        readAvailable(&child)
        if child.standardError >= 0 { close(child.standardError) }
        if child.pidfd >= 0 { close(child.pidfd) }
        thread.withMail { $0.watching -= 1 }
        let kept = child.tail.suffix(Self.standardErrorTailBytes)
        child.onExit(status, String(decoding: kept, as: UTF8.self))
    }

    /// Reads what the child's stderr holds now, keeping the last few KiB.
    private func readAvailable(_ child: inout Child) {
        guard child.standardError >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(child.standardError, $0.baseAddress, $0.count) }
            if count > 0 {
                child.tail.append(contentsOf: buffer[0..<count])
                if child.tail.count > 2 * Self.standardErrorTailBytes {
                    child.tail.removeFirst(child.tail.count - Self.standardErrorTailBytes)
                }
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count == 0 || errno != EAGAIN {
                // The end, or an error: nothing more will be read from it.
                close(child.standardError)
                child.standardError = -1
            }
            return
        }
    }
}
