import Glibc
import Logging
import SystemCalls

/// What an item's command, or the `LaunchCommand`, came to once it ended: for the core to log
/// with the item and to decide whether a person should be told.
struct CommandExit: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// An `[Actions]` command, with its number in the core's table of running commands.
        case action(id: UInt64)
        /// The `LaunchCommand`; `connectedSinceLaunch`: an app connected before it ended.
        case launch(connectedSinceLaunch: Bool)
    }

    var kind: Kind
    var place: CommandPlace
    var program: String
    /// The item it ran for (translated title, type, contact).
    var item: CommandItem
    /// How it ended (the status, or why it never ran).
    var end: CommandEnd

    var standardErrorTail: String { end.standardErrorTail }

    var succeeded: Bool { end.waitStatus == 0 }

    /// Whether it is known to have failed (an end that could not be followed is not).
    var failed: Bool { end.waitStatus.map { $0 != 0 } ?? (end.problem != nil) }

    /// "exited with status 2", "was killed by signal 9", "did not run: …".
    var ending: String {
        if let status = end.waitStatus { return LaunchCommandRunner.describe(waitStatus: status) }
        if let problem = end.problem { return "did not run: \(problem)" }
        return "ended out of sight (the connection to the user manager was lost)"
    }
}

/// The item a command runs for, as logs and notifications name it.
struct CommandItem: Sendable, Equatable {
    var type: String
    var title: String
    var contactIdentifier: String?
}

/// Runs `[Actions]` commands through the `CommandStarter`: without a shell (the argv the template
/// was expanded to), the item's values also in the environment; started directly, its stderr's
/// last few KiB are kept for the log. Its end comes back as a `CommandExit` through `onExit`.
/// Unlike the `LaunchCommand`, several may run at once (as many as the core's table admits).
final class ActionCommandRunner: Sendable {
    private let starter: CommandStarter
    private let onExit: @Sendable (CommandExit) -> Void

    init(starter: CommandStarter, onExit: @escaping @Sendable (CommandExit) -> Void) {
        self.starter = starter
        self.onExit = onExit
    }

    /// Starts the command `id` of the core's table; where it runs, or why it could not start
    /// (not found, not executable…).
    func run(_ argv: [String], id: UInt64, environment request: LaunchRequest, item: CommandItem) -> Result<CommandPlace, SystemCallError> {
        let program = argv[0]
        return starter.start(
            argv, request: request, description: "Quick action “\(item.title)” (\(program))", readingStandardError: true
        ) { [onExit] place, end in
            onExit(CommandExit(kind: .action(id: id), place: place, program: program, item: item, end: end))
        }
    }
}
