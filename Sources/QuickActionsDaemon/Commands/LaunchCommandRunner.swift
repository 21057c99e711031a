import Glibc
import NIOConcurrencyHelpers
import Logging
import QuickActions
import QuickActionsProtocol
import Synchronization
import SystemCalls

/// What starting the `LaunchCommand` came to, for the trigger's reply.
struct LaunchOutcome: Sendable, Equatable {
    var status: TriggerReply.LaunchStatus
    var pid: Int32?
    /// The user manager's unit it runs in, when it was started as one.
    var unit: String? = nil
    var error: String?
    /// Why it could not start (`failed`), for the notification.
    var spawnError: SystemCallError? = nil
}

/// What the launched app is told about the item that launched it.
struct LaunchRequest: Sendable, Equatable {
    var command: [String]
    var shortcutType: String
    var contactIdentifier: String?
    var socketPath: String
    /// The item's title (translated as the app sees it) and its contact's values, when it has one.
    var shortcutTitle: String? = nil
    var contactName: String? = nil
    var contactEmail: String? = nil
    var contactFile: String? = nil
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
        /// Where the launched command runs, while it runs.
        var running: CommandPlace?
        /// False from a launch until an app connects: while false a running child is
        /// still starting up and a second launch would only start a duplicate app.
        var appConnectedSinceLaunch = true
    }

    private let state = NIOLockedValueBox(State())
    private let logger: Logger
    private let starter: CommandStarter
    private let onExit: @Sendable (CommandExit) -> Void

    init(logger: Logger, starter: CommandStarter? = nil, onExit: @escaping @Sendable (CommandExit) -> Void = { _ in }) {
        self.logger = logger
        self.starter = starter ?? .direct(logger: logger)
        self.onExit = onExit
    }

    /// An app connected: the launched process (or another) is up, so the next cold
    /// trigger, after that app is gone, launches again.
    func noteAppConnected() {
        state.withLockedValue { $0.appConnectedSinceLaunch = true }
    }

    /// Where the launched command runs, while it runs.
    var running: CommandPlace? { state.withLockedValue { $0.running } }

    func launch(_ request: LaunchRequest) -> LaunchOutcome {
        guard let executable = request.command.first else { return LaunchOutcome(status: .notConfigured) }
        // Hold the lock across the spawn so two triggers at once cannot both start a copy.
        return state.withLockedValue { state -> LaunchOutcome in
            if let running = state.running, !state.appConnectedSinceLaunch {
                logger.info("The launch command (\(running)) has not connected yet; it will get the newer pending item.")
                return LaunchOutcome(status: .alreadyRunning, pid: running.pid, unit: running.unit)
            }
            let item = CommandItem(
                type: request.shortcutType, title: request.shortcutTitle ?? request.shortcutType,
                contactIdentifier: request.contactIdentifier)
            let started = starter.start(
                request.command, request: request, description: "App launched for “\(item.title)” (\(executable))",
                readingStandardError: false
            ) { [self] place, end in ended(place, end, program: executable, item: item) }
            let place: CommandPlace
            switch started {
            case .success(let where_): place = where_
            case .failure(let error):
                logger.error("Could not start the launch command '\(executable)': \(error)")
                return LaunchOutcome(status: .failed, error: String(describing: error), spawnError: error)
            }
            logger.info("Started the launch command '\(executable)' (\(place)).", metadata: ["QACTD_SHORTCUT_TYPE": "\(request.shortcutType)"])
            // Its end, reported on another thread, waits for this lock: it finds the place set.
            state.running = place
            state.appConnectedSinceLaunch = false
            return LaunchOutcome(status: .started, pid: place.pid, unit: place.unit)
        }
    }

    /// The launched command ended: no longer running; the core hears how.
    private func ended(_ place: CommandPlace, _ end: CommandEnd, program: String, item: CommandItem) {
        let connected = state.withLockedValue { state in
            if state.running == place { state.running = nil }
            return state.appConnectedSinceLaunch
        }
        let exit = CommandExit(kind: .launch(connectedSinceLaunch: connected), place: place, program: program, item: item, end: end)
        logger.info("The launch command (\(place)) \(exit.ending).")
        onExit(exit)
    }

    /// Environment variables of the daemon the launched app must not inherit: stale item
    /// values, and systemd's per-service ones (the app is not the service: it must not
    /// send READY=1 or take over the listening socket as if it were qactd).
    static let withheldEnvironment: Set<String> = [
        "QACTD_SHORTCUT_TYPE", "QACTD_CONTACT_IDENTIFIER", "QACTD_SOCKET",
        "QACTD_SHORTCUT_TITLE", "QACTD_CONTACT_NAME", "QACTD_CONTACT_EMAIL", "QACTD_CONTACT_FILE",
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
        // A value with a NUL cannot be an environment entry (it would be cut short there), nor one
        // longer than Linux passes (`MAX_ARG_STRLEN`: the program would not start at all): left out.
        let values: [(String, String?)] = [
            ("QACTD_SHORTCUT_TITLE", request.shortcutTitle), ("QACTD_CONTACT_NAME", request.contactName),
            ("QACTD_CONTACT_EMAIL", request.contactEmail), ("QACTD_CONTACT_FILE", request.contactFile),
        ]
        for case (let name, let value?) in values where !value.utf8.contains(0) && value.utf8.count + name.utf8.count < CommandTemplate.maximumArgumentBytes {
            entries.append("\(name)=\(value)")
        }
        return entries
    }

    static func describe(waitStatus status: Int32) -> String {
        let signalNumber = status & 0x7f
        if signalNumber == 0 { return "exited with status \((status >> 8) & 0xff)" }
        return "was killed by signal \(signalNumber)"
    }
}
