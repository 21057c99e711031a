import Glibc
import QuickActionsProtocol
import Varlink

/// Where an app's instance listens, and how it is started.
struct QuickActionsInstance: Sendable {
    let socketPath: String
    /// The instance's name, when the app is known by its desktop-file ID.
    let app: AppName?

    init(socketPath: String) {
        self.socketPath = socketPath
        app = nil
    }

    init(desktopFileID: String, socketPath: String?) throws {
        let id = desktopFileID.hasSuffix(".desktop") ? String(desktopFileID.dropLast(".desktop".count)) : desktopFileID
        let app = try AppName(validating: id)
        self.app = app
        if let socketPath {
            self.socketPath = socketPath
        } else if let fromEnvironment = getenv("QACTD_SOCKET").map({ String(cString: $0) }), !fromEnvironment.isEmpty {
            self.socketPath = fromEnvironment
        } else {
            let runtime = InstancePaths.runtimeFolder(xdgRuntimeDirectory: getenv("XDG_RUNTIME_DIR").map { String(cString: $0) }, userID: getuid())
            self.socketPath = InstancePaths.socketPath(of: .app(app), runtimeFolder: runtime)
        }
    }

    /// A connection; when nothing listens, and `startsInstance`, the instance's socket unit is
    /// started by the user manager (which then starts the daemon on this first connection).
    func connect(startsInstance: Bool) throws -> VarlinkClient {
        do {
            return try VarlinkClient(unixSocketPath: socketPath)
        } catch .daemonUnreachable(let path, let reason) {
            guard startsInstance, let app else { throw VarlinkClientError.daemonUnreachable(path: path, reason: reason) }
            try Self.run(["systemctl", "--user", "start", app.socketUnit])
            return try VarlinkClient(unixSocketPath: socketPath)
        }
    }

    /// Runs a program to its end; a failure to start it or a non-zero exit says which.
    private static func run(_ arguments: [String]) throws {
        var pid = pid_t()
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        let started = posix_spawnp(&pid, arguments[0], nil, nil, &cArguments, environ)
        guard started == 0 else {
            throw VarlinkClientError.daemonUnreachable(path: arguments.joined(separator: " "), reason: "cannot run it: \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else {
            throw VarlinkClientError.daemonUnreachable(path: arguments.joined(separator: " "), reason: "it failed (wait status \(status))")
        }
    }
}
