import CLinux
import Glibc
import Logging
import SystemCalls

/// What an item's command, or the `LaunchCommand`, came to once it ended: for the core to log
/// with the item and to decide whether a person should be told.
struct CommandExit: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// An `[Actions]` command.
        case action
        /// The `LaunchCommand`; `connectedSinceLaunch`: an app connected before it ended.
        case launch(connectedSinceLaunch: Bool)
    }

    var kind: Kind
    var pid: Int32
    var program: String
    /// The item it ran for (translated title, type, contact).
    var item: CommandItem
    /// `waitpid`'s status.
    var waitStatus: Int32
    /// The end of what it wrote to stderr (actions only: the `LaunchCommand`'s goes to the daemon's).
    var standardErrorTail: String

    var succeeded: Bool { waitStatus == 0 }

    /// "exited with status 2", "was killed by signal 9".
    var ending: String { LaunchCommandRunner.describe(waitStatus: waitStatus) }
}

/// The item a command runs for, as logs and notifications name it.
struct CommandItem: Sendable, Equatable {
    var type: String
    var title: String
    var contactIdentifier: String?
}

/// Runs `[Actions]` commands: `posix_spawnp` without a shell (the argv the template was
/// expanded to), the item's values also in the environment, stderr into a pipe whose last
/// few KiB are kept. A thread of its own per command waits for the end — in `poll` on the
/// pipe and the process's pidfd, so a program that leaves a child holding stderr open (as
/// `xdg-open` does with the app it starts) is still reported when it exits — and hands the
/// `CommandExit` to `onExit`. Unlike the `LaunchCommand`, several may run at once.
final class ActionCommandRunner: Sendable {
    /// How much of stderr is kept for the log.
    static let standardErrorTailBytes = 2048

    private let logger: Logger
    private let onExit: @Sendable (CommandExit) -> Void

    init(logger: Logger, onExit: @escaping @Sendable (CommandExit) -> Void) {
        self.logger = logger
        self.onExit = onExit
    }

    /// Starts the command; its pid, or why it could not start (not found, not executable…).
    func run(_ argv: [String], environment request: LaunchRequest, item: CommandItem) -> Result<Int32, SystemCallError> {
        var pipeEnds: [Int32] = [-1, -1]
        do {
            try retryingSystemCall("pipe") { pipe(&pipeEnds) }
        } catch {
            return .failure(error)
        }
        // Close-on-exec (pipe2 is hidden behind _GNU_SOURCE): no other program the daemon starts inherits them.
        for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let environment = LaunchCommandRunner.environment(for: request, inheriting: LaunchCommandRunner.currentEnvironment())
        let pid: pid_t
        do {
            pid = try ProcessSpawner.spawn(argv, environment: environment, standardError: pipeEnds[1])
        } catch {
            close(pipeEnds[0])
            close(pipeEnds[1])
            return .failure(error)
        }
        close(pipeEnds[1])
        let reading = pipeEnds[0]
        let program = argv[0]
        let watch = CommandWatch(pid: pid, standardError: reading, logger: logger)
        do {
            try startDetachedThread(named: "qactd-command") { [onExit] in
                let (status, tail) = watch.waitForExit()
                onExit(CommandExit(kind: .action, pid: pid, program: program, item: item, waitStatus: status, standardErrorTail: tail))
            }
        } catch {
            logger.error("Could not start a thread to wait for the command (pid \(pid)): \(errnoText(error.errno)); it may linger as a zombie.")
            close(reading)
        }
        return .success(pid)
    }
}

/// One running command: its pid and the reading end of its stderr.
private final class CommandWatch: Sendable {
    let pid: pid_t
    let standardError: Int32
    let logger: Logger

    init(pid: pid_t, standardError: Int32, logger: Logger) {
        self.pid = pid
        self.standardError = standardError
        self.logger = logger
    }

    /// Reads stderr until the process has exited and nothing is left to read; returns the
    /// wait status and the tail of stderr.
    func waitForExit() -> (status: Int32, tail: String) {
        defer { close(standardError) }
        var tail: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let pidfd = CLinux_pidfdOpen(pid)
        defer { if pidfd >= 0 { close(pidfd) } }
        var streamOpen = true
        var exited: Int32?
        // Without a pidfd (Linux before 5.3), stderr's end is the only event: read it whole.
        let sleeper = pidfd >= 0 ? WakeUpSocket.make(for: "a command's wait", logger: logger) : nil
        defer { sleeper?.close() }
        while streamOpen {
            var descriptors = [pollfd(fd: standardError, events: Int16(POLLIN), revents: 0)]
            if let sleeper {
                if exited == nil { descriptors.append(pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)) }
                // Once it has exited, only what is already in the pipe is read (a child it left
                // behind may keep the pipe open for as long as it runs).
                let (ready, _) = sleeper.sleep(polling: &descriptors, timeoutMilliseconds: exited == nil ? -1 : 0)
                if ready == 0, exited != nil { break }
                if descriptors.count > 1, descriptors[1].revents != 0 {
                    exited = reap()
                }
                if descriptors[0].revents == 0 { continue }
            }
            let count = buffer.withUnsafeMutableBytes { read(standardError, $0.baseAddress, $0.count) }
            if count > 0 {
                tail.append(contentsOf: buffer[0..<count])
                if tail.count > 2 * ActionCommandRunner.standardErrorTailBytes {
                    tail.removeFirst(tail.count - ActionCommandRunner.standardErrorTailBytes)
                }
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                streamOpen = false
            }
        }
        let status = exited ?? reap()
        let kept = tail.suffix(ActionCommandRunner.standardErrorTailBytes)
        return (status, String(decoding: kept, as: UTF8.self))
    }

    /// Waits for the process (at once when its pidfd said it exited) and returns its status.
    private func reap() -> Int32 {
        var status: Int32 = 0
        _ = try? retryingSystemCall("waitpid") { waitpid(pid, &status, 0) }
        return status
    }
}
