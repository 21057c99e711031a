import ArgumentParser
import Logging
import QuickActionsDaemon
import QuickActionsProtocol
import SystemCalls

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's command line, which the executable runs unless it was started as `qactl`.
public enum QactdCommandLine {
    public static func main() { Qactd.main() }
}

struct Qactd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qactd",
        abstract: "Home Screen quick actions daemon: favorites and static items for a launcher.",
        discussion: """
            Runs in the foreground (as a systemd user service, or by hand), watches the \
            contacts directory, keeps the quick-action set and answers on a Varlink socket. \
            See qactd(8) and qactd.conf(5).
            """,
        version: QactdVersion.string)

    @Option(name: .long, help: ArgumentHelp("The configuration file (default: $XDG_CONFIG_HOME/qactd/qactd.conf, else PREFIX/etc/qactd/qactd.conf).", valueName: "path"), completion: .file())
    var config: String?

    @Option(
        name: .customLong("check-config"),
        help: ArgumentHelp(
            "Read the configuration file as the daemon would at start-up and exit: 0 when it is valid, 78 (naming file, line and key) when qactd would refuse it.",
            valueName: "path"), completion: .file())
    var checkConfig: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Serve one app of several: read $XDG_CONFIG_HOME/qactd/NAME.conf, keep state in $XDG_STATE_HOME/qactd/NAME/, listen on $XDG_RUNTIME_DIR/qactd/NAME.sock (the unit qactd@NAME.service passes it).",
            valueName: "name"))
    var app: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("debug, info, notice, warning or error.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(argument: logLevel) != nil else {
            throw ValidationError("--log-level must be one of debug, info, notice, warning, error; not '\(logLevel)'.")
        }
        _ = try instance()
    }

    /// The plain daemon, or the app `--app` names; a name that is not one is a usage error (64).
    private func instance() throws -> InstanceName {
        guard let app else { return .plain }
        do {
            return .app(try AppName(validating: app))
        } catch {
            throw ValidationError("--app: \(error)")
        }
    }

    func run() throws {
        var environment = environmentVariables()
        // HOME anchors the default paths; a service started without it still has a passwd entry.
        if environment["HOME"].map(\.isEmpty) ?? true, let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir {
            environment["HOME"] = String(cString: directory)
        }
        if let checkConfig {
            let (status, message) = Daemon.checkConfiguration(path: checkConfig, environment: environment, instance: try instance())
            if status == 0 {
                print(message)
            } else {
                // The descriptor, not the C global `stderr`, which Swift 6 keeps from concurrent code.
                let line = Array("qactd: \(message)\n".utf8)
                _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            }
            if status != 0 { throw ExitCode(status) }
            return
        }
        let status = Daemon.main(
            DaemonOptions(
                configPath: config, logLevel: Logger.Level(argument: logLevel) ?? .info, environment: environment,
                instance: try instance()))
        if status != 0 { throw ExitCode(status) }
    }
}
