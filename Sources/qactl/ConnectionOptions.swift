import ArgumentParser

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

    @Flag(name: .long, help: "Print machine-readable JSON instead of aligned text.")
    var json = false

    var settings: ConnectionSettings { ConnectionSettings(socket: socket, json: json) }
}

/// What `ConnectionOptions` holds, as a plain value: `CommonInvocation` fills it without
/// swift-argument-parser's property wrappers.
struct ConnectionSettings {
    var socket: String?
    var json = false

    var socketPath: String {
        if let socket { return socket }
        if let fromEnvironment = environment("QACTD_SOCKET"), !fromEnvironment.isEmpty { return fromEnvironment }
        let runtimeDirectory = environment("XDG_RUNTIME_DIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        return "\(runtimeDirectory)/qactd/qactd.sock"
    }
}

func environment(_ name: String) -> String? {
    getenv(name).map { String(cString: $0) }
}
