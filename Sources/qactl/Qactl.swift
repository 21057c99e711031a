import ArgumentParser
import QuickActionsProtocol

/// The client's command line, which the executable runs when started as `qactl`.
public enum QactlCommandLine {
    public static func main() { Qactl.main() }
}

struct Qactl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qactl",
        abstract: "Query and drive qactd, the Home Screen quick actions daemon.",
        discussion: """
            qactl talks to qactd over its Varlink socket: it lists the quick actions a \
            launcher shows on the app's icon, triggers one as if the user picked it, \
            tells the daemon the app resigned active, follows the set as it changes \
            (watch), stands in for the app to receive actions (app), and validates \
            static-item files offline.

            --app, --socket and --json may also come before the command, as in \
            qactl --app thunderbird list.

            Exit status: 0 on success, 1 when the daemon answered with an error (or a \
            file does not validate), 64 on a usage error, 69 when the daemon cannot be \
            reached.
            """,
        version: QactdVersion.string,
        subcommands: [
            StatusCommand.self, ListCommand.self, TriggerCommand.self, PinCommand.self, PinsCommand.self, UnpinCommand.self,
            ResignActiveCommand.self,
            ReloadCommand.self, ContactCommand.self, ValidateCommand.self, WatchCommand.self, AppCommand.self,
            AppsCommand.self,
        ]
    )

    /// Everyday invocations skip swift-argument-parser's reflection (see `CommonInvocation`);
    /// errors end the same way on both paths, through `exit(withError:)`.
    static func main() {
        let arguments = LeadingConnectionOptions.movedAfterCommand(Array(CommandLine.arguments.dropFirst()))
        guard let invocation = CommonInvocation(arguments: arguments) else {
            main(arguments)
            return
        }
        do {
            try invocation.run()
        } catch {
            exit(withError: error)
        }
    }
}
