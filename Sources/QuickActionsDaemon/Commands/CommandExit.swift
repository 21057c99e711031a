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
