import ArgumentParser
import QuickActionsProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Options every command that talks to the daemon shares.
struct ConnectionOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's socket (default: $QACTD_SOCKET, else $XDG_RUNTIME_DIR/qactd/qactd.sock).",
            valueName: "path"))
    var socket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Talk to this app's daemon (qactd@NAME.service), at $XDG_RUNTIME_DIR/qactd/NAME.sock (default: $QACTD_APP).",
            valueName: "name"))
    var app: String?

    @Flag(name: .long, help: "Print machine-readable JSON instead of aligned text.")
    var json = false

    func validate() throws {
        if socket != nil, app != nil { throw ValidationError("Give either --socket or --app, not both.") }
        if let app {
            do { _ = try AppName(validating: app) } catch { throw ValidationError("--app: \(error)") }
        }
    }

    var settings: ConnectionSettings { ConnectionSettings(socket: socket, app: app, json: json) }
}

/// What `ConnectionOptions` holds, as a plain value: `CommonInvocation` fills it without
/// swift-argument-parser's property wrappers.
struct ConnectionSettings {
    var socket: String?
    /// Already validated by whoever parsed it.
    var app: String?
    var json = false

    /// The daemon to talk to: `--socket`, else `--app`, else `$QACTD_SOCKET`, else `$QACTD_APP`,
    /// else the plain daemon. An option beats the environment, and a socket an app name at the
    /// same level. The instance is nil when a socket was named, which may be anyone's.
    func target() throws(AppNameError) -> (socketPath: String, instance: InstanceName?) {
        if let socket { return (socket, nil) }
        if let app { return Self.target(of: .app(try AppName(validating: app))) }
        if let fromEnvironment = environment("QACTD_SOCKET"), !fromEnvironment.isEmpty { return (fromEnvironment, nil) }
        if let fromEnvironment = environment("QACTD_APP"), !fromEnvironment.isEmpty {
            return Self.target(of: .app(try AppName(validating: fromEnvironment)))
        }
        return Self.target(of: .plain)
    }

    private static func target(of instance: InstanceName) -> (socketPath: String, instance: InstanceName?) {
        (InstancePaths.socketPath(of: instance, runtimeFolder: runtimeFolder), instance)
    }

    /// Where every instance's socket is: `$XDG_RUNTIME_DIR/qactd`.
    static var runtimeFolder: String {
        InstancePaths.runtimeFolder(xdgRuntimeDirectory: environment("XDG_RUNTIME_DIR"), userID: getuid())
    }
}

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
