import Glibc
import Logging
import QuickActionsProtocol
import SystemCalls

/// Where a started command runs: a child of the daemon, or a unit of the user manager.
enum CommandPlace: Sendable, Equatable, CustomStringConvertible {
    case process(pid: Int32)
    case unit(String)

    var pid: Int32? {
        if case .process(let pid) = self { return pid }
        return nil
    }

    var unit: String? {
        if case .unit(let name) = self { return name }
        return nil
    }

    var description: String {
        switch self {
        case .process(let pid): "pid \(pid)"
        case .unit(let name): "unit \(name)"
        }
    }

    /// The journal fields of a command of an item of `type` running here.
    func metadata(type: String) -> Logger.Metadata {
        switch self {
        case .process(let pid): ["QACTD_SHORTCUT_TYPE": .string(type), "QACTD_COMMAND_PID": .stringConvertible(pid)]
        case .unit(let unit): ["QACTD_SHORTCUT_TYPE": .string(type), "QACTD_COMMAND_UNIT": .string(unit)]
        }
    }
}

/// How a started command ended: `waitStatus` (`waitpid`'s encoding) when its process exited;
/// else `problem` says why it never ran, or both are nil when its end could not be followed
/// (the connection to the user manager was lost while it ran).
struct CommandEnd: Sendable, Equatable {
    var waitStatus: Int32?
    var standardErrorTail = ""
    var problem: String?
}

/// The one place every command the daemon runs is started from, `[Actions]` commands and the
/// `LaunchCommand` alike: as a transient unit of the user manager when one answered at
/// start-up (`UserManagerCommands`), else directly (`ProcessSpawner`), reaped by the one
/// `ChildReaper`. Either way the end comes back through `onEnd`, on a thread of the starter's.
struct CommandStarter: Sendable {
    let reaper: ChildReaper
    /// nil: commands start directly.
    let userManager: UserManagerCommands?
    /// Why commands start directly, for `Status` and the log.
    let directReason: String?

    /// Commands start directly (qactd run by hand, tests of the core).
    static func direct(logger: Logger, reason: String = "started without a user manager") -> CommandStarter {
        CommandStarter(reaper: ChildReaper(logger: logger), userManager: nil, directReason: reason)
    }

    /// What `Status` says of the way commands start.
    var info: CommandsInfo {
        guard let userManager else { return CommandsInfo(start: CommandsInfo.Start.direct.rawValue, message: directReason, running: 0, limit: 0) }
        let connected = userManager.isConnected
        return CommandsInfo(
            start: (connected ? CommandsInfo.Start.unit : .direct).rawValue, manager: userManager.address.text,
            message: connected ? nil : "the connection to the user manager was lost; connecting again", running: 0, limit: 0)
    }

    /// Starts `argv` with the item's values of `request` in its environment (`description` names
    /// the item for the unit); `standardError`: read the last of it into the end (a direct start's
    /// only: a unit's goes to the journal under the unit's name).
    func start(
        _ argv: [String], request: LaunchRequest, description: String, readingStandardError: Bool,
        onEnd: @escaping @Sendable (CommandPlace, CommandEnd) -> Void
    ) -> Result<CommandPlace, SystemCallError> {
        if let userManager, userManager.isConnected {
            let unit = UserManagerCommands.unitName(program: argv[0])
            let handed = userManager.start(UserManagerCommands.Request(
                unit: unit, argv: argv, environment: LaunchCommandRunner.environment(for: request, inheriting: []),
                description: description
            ) { end in onEnd(.unit(unit), end) })
            if handed { return .success(.unit(unit)) }
        }
        var pipeEnds: [Int32] = [-1, -1]
        if readingStandardError {
            do {
                try retryingSystemCall("pipe") { pipe(&pipeEnds) }
            } catch {
                return .failure(error)
            }
            // Close-on-exec (pipe2 is hidden behind _GNU_SOURCE): no other program the daemon starts inherits them.
            for end in pipeEnds { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        }
        let environment = LaunchCommandRunner.environment(for: request, inheriting: environmentEntries())
        let pid: pid_t
        do {
            pid = try ProcessSpawner.spawn(argv, environment: environment, standardError: readingStandardError ? pipeEnds[1] : nil)
        } catch {
            for end in pipeEnds where end >= 0 { close(end) }
            return .failure(error)
        }
        if readingStandardError { close(pipeEnds[1]) }
        reaper.watch(pid, standardError: readingStandardError ? pipeEnds[0] : nil) { status, tail in
            onEnd(.process(pid: pid), CommandEnd(waitStatus: status, standardErrorTail: tail))
        }
        return .success(.process(pid: pid))
    }
}
