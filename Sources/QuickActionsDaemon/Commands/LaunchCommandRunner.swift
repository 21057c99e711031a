import Glibc
import Logging
import QuickActionsProtocol
import Synchronization
import SystemCalls

/// What starting the `LaunchCommand` came to, for the trigger's reply.
struct LaunchOutcome: Sendable, Equatable {
    var status: TriggerReply.LaunchStatus
    var pid: Int32?
    var error: String?
}

/// What the launched app is told about the item that launched it.
struct LaunchRequest: Sendable, Equatable {
    var command: [String]
    var shortcutType: String
    var contactIdentifier: String?
    var socketPath: String
}

/// Starts the `[App] LaunchCommand` for a cold delivery (no app connected) and reaps it.
///
/// The command runs without a shell (`posix_spawnp` with the argv the configuration
/// split), and the item reaches it only through the environment, so nothing a contact
/// file contains can be read as shell syntax. At most one launched process waits to
/// connect at a time: a trigger while it is still starting only replaces the pending
/// item, which the app receives when it connects, instead of starting another copy.
final class LaunchCommandRunner: Sendable {
    private struct State {
        /// The launched process, while it runs.
        var runningPID: pid_t?
        /// False from a launch until an app connects: while false a running child is
        /// still starting up and a second launch would only start a duplicate app.
        var appConnectedSinceLaunch = true
    }

    private let state = Mutex(State())
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    /// An app connected: the launched process (or another) is up, so the next cold
    /// trigger, after that app is gone, launches again.
    func noteAppConnected() {
        state.withLock { $0.appConnectedSinceLaunch = true }
    }

    /// The launched process, while it runs (for tests and status).
    var runningPID: pid_t? { state.withLock { $0.runningPID } }

    func launch(_ request: LaunchRequest) -> LaunchOutcome {
        guard let executable = request.command.first else { return LaunchOutcome(status: .notConfigured) }
        // Hold the lock across the spawn so two triggers at once cannot both start a copy.
        return state.withLock { state -> LaunchOutcome in
            if let running = state.runningPID, !state.appConnectedSinceLaunch {
                logger.info("The launch command (pid \(running)) has not connected yet; it will get the newer pending item.")
                return LaunchOutcome(status: .alreadyRunning, pid: running)
            }
            let pid: pid_t
            do {
                pid = try Self.spawn(request)
            } catch {
                logger.error("Could not start the launch command '\(executable)': \(error)")
                return LaunchOutcome(status: .failed, error: String(describing: error))
            }
            logger.info("Started the launch command '\(executable)' (pid \(pid)).", metadata: ["QACTD_SHORTCUT_TYPE": "\(request.shortcutType)"])
            state.runningPID = pid
            state.appConnectedSinceLaunch = false
            reapInBackground(pid)
            return LaunchOutcome(status: .started, pid: pid)
        }
    }

    /// Environment variables of the daemon the launched app must not inherit: stale item
    /// values, and systemd's per-service ones (the app is not the service: it must not
    /// send READY=1 or take over the listening socket as if it were qactd).
    static let withheldEnvironment: Set<String> = [
        "QACTD_SHORTCUT_TYPE", "QACTD_CONTACT_IDENTIFIER", "QACTD_SOCKET",
        "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID",
    ]

    static func environment(for request: LaunchRequest, inheriting inherited: [String]) -> [String] {
        var entries = inherited.filter { entry in
            let name = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? entry
            return !withheldEnvironment.contains(name)
        }
        entries.append("QACTD_SHORTCUT_TYPE=\(request.shortcutType)")
        if let contactIdentifier = request.contactIdentifier {
            entries.append("QACTD_CONTACT_IDENTIFIER=\(contactIdentifier)")
        }
        entries.append("QACTD_SOCKET=\(request.socketPath)")
        return entries
    }

    /// The daemon's own environment, as `NAME=value` entries.
    static func currentEnvironment() -> [String] {
        var entries: [String] = []
        var cursor = environ
        while let entry = cursor.pointee {
            entries.append(String(cString: entry))
            cursor += 1
        }
        return entries
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, CInt) -> CInt

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34+), looked up at run time because
    /// <spawn.h> declares it only under `_GNU_SOURCE`, which the Swift Glibc module is built without.
    /// On an older glibc it is missing and the app inherits the descriptors, as before.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    private static func spawn(_ request: LaunchRequest) throws(SystemCallError) -> pid_t {
        let environment = environment(for: request, inheriting: currentEnvironment())
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The daemon ignores SIGTERM/SIGINT/SIGHUP (it reads them from a signal source) and
        // ignored signals survive exec: without a reset the app could not be stopped politely.
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signalNumber)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        // A session of its own: stopping the daemon's terminal or process group must not take the app with it.
        let setSessionFlag: Int32 = 0x80  // POSIX_SPAWN_SETSID (glibc), hidden behind _GNU_SOURCE
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | setSessionFlag))

        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        // The daemon's stdin is nothing the app should read; stdout and stderr go where the daemon's go (the journal).
        posix_spawn_file_actions_addopen(&fileActions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        // SwiftNIO accepts connections and creates its epoll descriptors without close-on-exec:
        // an app that inherited them would hold clients' connections half-open across the
        // daemon's stops and restarts. Everything above stderr is closed in the child.
        if let addCloseFrom = Self.addCloseFrom {
            _ = addCloseFrom(&fileActions, STDERR_FILENO + 1)
        }

        let argv = request.command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, request.command[0], &fileActions, &attributes, argv, envp)
        // posix_spawn reports its error as the return value, not in errno.
        guard result == 0 else { throw SystemCallError(call: "posix_spawnp", path: request.command[0], errno: result) }
        return pid
    }

    /// Waits for the child on a thread of its own, so it never lingers as a zombie and
    /// no pool thread the daemon's async work needs is blocked for the app's lifetime.
    private func reapInBackground(_ pid: pid_t) {
        let reaper = ChildReaper(pid: pid) { [self] status in
            state.withLock { state in
                if state.runningPID == pid { state.runningPID = nil }
            }
            logger.info("The launch command (pid \(pid)) \(Self.describe(waitStatus: status)).")
        }
        do {
            try startDetachedThread(named: "qactd-reaper") { reaper.waitForExit() }
        } catch {
            logger.error("Could not start a thread to reap the launch command (pid \(pid)): \(errnoText(error.errno)); it may linger as a zombie.")
        }
    }

    static func describe(waitStatus status: Int32) -> String {
        let signalNumber = status & 0x7f
        if signalNumber == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return "was killed by signal \(signalNumber)"
    }
}

/// Waits for one launched child and reports how it ended.
private final class ChildReaper: Sendable {
    let pid: pid_t
    let onExit: @Sendable (Int32) -> Void

    init(pid: pid_t, onExit: @escaping @Sendable (Int32) -> Void) {
        self.pid = pid
        self.onExit = onExit
    }

    func waitForExit() {
        var status: Int32 = 0
        guard (try? retryingSystemCall("waitpid") { waitpid(pid, &status, 0) }) != nil else { return }
        onExit(status)
    }
}
