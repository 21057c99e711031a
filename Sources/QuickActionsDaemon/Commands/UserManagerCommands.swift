import Glibc
import Logging

/// Starts commands the way desktops start apps: each one a transient service of the user's
/// systemd manager (`org.freedesktop.systemd1.Manager.StartTransientUnit`), named
/// `app-qactd-<program>@<random>.service` after systemd's conventions for desktop
/// environments, in `app.slice`. The manager forks it, so it gets the manager's current
/// environment (plus the item's `QACTD_*` values), none of the daemon's sandbox (seccomp
/// filter, `NoNewPrivileges=`, mount namespace), a cgroup of its own, and it outlives a restart
/// or crash of the daemon. A scope would not do: its processes would be the daemon's children
/// and inherit all of that.
///
/// One sd-bus connection (the manager's private socket `$XDG_RUNTIME_DIR/systemd/private`, as
/// `systemctl --user` uses, else the session bus), owned by one `MailboxThread`, `qactd-units`,
/// asleep on the connection. The core hands it requests as mail and never waits for the bus.
/// The thread subscribes to the manager's signals once, so the unit's `PropertiesChanged`
/// (`ExecMainCode`/`ExecMainStatus` when its main process exits, `ActiveState`) and the start
/// job's `JobRemoved` reach it however fast the command ends; each unit's end is reported
/// once, as `onEnd`.
final class UserManagerCommands: Sendable {
    /// How long a call to the manager may take.
    static let callTimeoutMicroseconds: UInt64 = 5_000_000
    static let manager = "org.freedesktop.systemd1"
    static let managerPath = "/org/freedesktop/systemd1"
    static let managerInterface = "org.freedesktop.systemd1.Manager"

    /// One command to start as a unit.
    struct Request: Sendable {
        var unit: String
        var argv: [String]
        /// Only what the command gets beyond the manager's own environment: the item's values.
        var environment: [String]
        var description: String
        var onEnd: @Sendable (CommandEnd) -> Void
    }

    /// Where the manager is, from the daemon's environment.
    enum Address: Sendable, Equatable {
        /// The private socket of the user manager: no bus daemon in between.
        case privateSocket(String)
        /// `org.freedesktop.systemd1` on the session bus.
        case sessionBus(String)

        var text: String {
            switch self {
            case .privateSocket(let path): "unix:path=" + path
            case .sessionBus(let address): address
            }
        }
    }

    private struct Mail: Sendable {
        var waiting: [Request] = []
        /// Set with the stop, under the same lock as `waiting`: a request is either refused or
        /// taken by the thread's last round.
        var stopping = false
        /// False while the connection is lost and not made again yet: commands start directly then.
        var connected = true
    }

    private let thread: MailboxThread<Mail>
    private let logger: Logger
    let address: Address

    private init(address: Address, logger: Logger) {
        self.address = address
        self.logger = logger
        thread = MailboxThread(named: "qactd-units", for: "the units thread", mail: Mail(), logger: logger)
    }

    /// The manager's addresses to try, in order: its private socket when it is there, then the
    /// session bus.
    static func addresses(environment: [String: String]) -> [Address] {
        var found: [Address] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            let path = runtime + "/systemd/private"
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { found.append(.privateSocket(path)) }
        }
        if case .success(let session) = SessionBus.address(environment: environment) {
            found.append(.sessionBus(session))
        }
        return found
    }

    /// Connects to the user manager and subscribes to its signals, and starts the thread; nil
    /// (with why, for `Status` and the log) when no manager answers. Called once, at start-up,
    /// before the socket listens, so the first trigger already knows which way commands start.
    static func connect(environment: [String: String], logger: Logger) -> (UserManagerCommands?, problem: String?) {
        let candidates = addresses(environment: environment)
        guard !candidates.isEmpty else {
            return (nil, "no user manager: neither $XDG_RUNTIME_DIR/systemd/private nor a session bus is there")
        }
        var problems: [String] = []
        for address in candidates {
            do {
                let connection = try ManagerConnection(address: address)
                let commands = UserManagerCommands(address: address, logger: logger)
                do {
                    try commands.thread.start { commands.run(connection) }
                } catch {
                    connection.close()
                    throw error
                }
                return (commands, nil)
            } catch {
                problems.append("\(address.text): \(error)")
            }
        }
        return (nil, "no user manager answers (" + problems.joined(separator: "; ") + ")")
    }

    /// Whether the manager's connection is up (else a command is better started directly).
    var isConnected: Bool { thread.withMail { $0.connected } }

    /// Hands the request to the units thread; false (nothing done) once the daemon is stopping.
    func start(_ request: Request) -> Bool {
        let accepted = thread.withMail { mail -> Bool in
            guard !mail.stopping else { return false }
            mail.waiting.append(request)
            return true
        }
        if accepted { thread.wake() }
        return accepted
    }

    /// At shutdown: the thread starts what it was handed and leaves; the units go on.
    func stop() {
        thread.withMail { $0.stopping = true }
        thread.requestStop()
    }

    /// A unit name for a command: `app-qactd-<program>@<random>.service`, the program's file name
    /// escaped as systemd escapes unit names (`-` separates the name's parts, so it is escaped too).
    static func unitName(program: String) -> String {
        let base = program.split(separator: "/").last.map(String.init) ?? program
        var escaped = ""
        for (offset, byte) in base.utf8.prefix(96).enumerated() {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "_") || (byte == UInt8(ascii: ".") && offset > 0)
            if plain {
                escaped.append(Character(Unicode.Scalar(byte)))
            } else {
                let hex = String(byte, radix: 16)
                escaped += "\\x" + (hex.count == 1 ? "0" : "") + hex
            }
        }
        let random = String(UInt64.random(in: .min ... .max), radix: 16)
        return "app-qactd-\(escaped.isEmpty ? "command" : escaped)@\(String(repeating: "0", count: 16 - random.count) + random).service"
    }

    /// `waitpid`'s encoding of a main process's end as the manager reports it (`ExecMainCode`:
    /// `CLD_EXITED` 1, `CLD_KILLED` 2, `CLD_DUMPED` 3; `ExecMainStatus`: the status or signal).
    static func waitStatus(code: Int32, status: Int32) -> Int32? {
        switch code {
        case 1: return (status & 0xff) << 8
        case 2: return status & 0x7f
        case 3: return (status & 0x7f) | 0x80
        default: return nil
        }
    }

    // MARK: - The units thread

    private struct Tracked {
        let unit: String
        let onEnd: @Sendable (CommandEnd) -> Void
        var result: String?
        /// Whether the unit was seen leaving `inactive` (a later `inactive` is then its end).
        var started = false
    }

    private func run(_ first: ManagerConnection) {
        var connection: ManagerConnection? = first
        var tracked: [String: Tracked] = [:]
        var retryDelay: Int32 = 100
        while true {
            let (requests, stopping) = thread.withMail { mail in
                defer { mail.waiting = [] }
                return (mail.waiting, mail.stopping)
            }
            if connection == nil {
                do {
                    connection = try ManagerConnection(address: address)
                    logger.info("Connected to the user manager again (\(address.text)); commands run in units of their own again.")
                    thread.withMail { $0.connected = true }
                    retryDelay = 100
                } catch {
                    logger.debug("The user manager cannot be reached yet: \(error)")
                }
            }
            for request in requests {
                guard let bus = connection else {
                    request.onEnd(CommandEnd(problem: "the user manager cannot be reached"))
                    continue
                }
                let path = ManagerConnection.unitPath(request.unit)
                // Tracked before the call: its signals may come right behind the reply.
                tracked[path] = Tracked(unit: request.unit, onEnd: request.onEnd)
                do {
                    try bus.startTransientUnit(request)
                } catch {
                    tracked[path] = nil
                    request.onEnd(CommandEnd(problem: "the user manager did not start it (\(error))"))
                }
            }
            if stopping { break }
            guard let bus = connection else {
                // Lost: what was being followed cannot be followed any more.
                for (_, unit) in tracked { unit.onEnd(CommandEnd()) }
                tracked = [:]
                var none: [pollfd] = []
                thread.sleep(polling: &none, timeoutMilliseconds: retryDelay)
                retryDelay = min(retryDelay * 2, 2000)
                continue
            }
            do {
                try bus.process { signal in
                    guard var unit = tracked[signal.path] else { return }
                    switch signal.kind {
                    case .mainExited(let code, let status):
                        guard let waitStatus = Self.waitStatus(code: code, status: status) else { return }
                        tracked[signal.path] = nil
                        unit.onEnd(CommandEnd(waitStatus: waitStatus))
                    case .result(let result):
                        unit.result = result
                        tracked[signal.path] = unit
                    case .activeState(let activeState):
                        guard activeState == "failed" || (activeState == "inactive" && unit.started) else {
                            unit.started = true
                            tracked[signal.path] = unit
                            return
                        }
                        tracked[signal.path] = nil
                        let result = unit.result.map { " (result \($0))" } ?? ""
                        unit.onEnd(CommandEnd(problem: "the unit became \(activeState) before its command ran\(result)"))
                    case .jobFailed(let result):
                        tracked[signal.path] = nil
                        unit.onEnd(CommandEnd(problem: "the user manager's start job ended with result '\(result)'"))
                    }
                }
                var descriptors = [pollfd(fd: bus.descriptor, events: bus.pollEvents, revents: 0)]
                thread.sleep(polling: &descriptors, timeoutMilliseconds: bus.timeoutMilliseconds)
            } catch {
                logger.warning("The connection to the user manager failed (\(error)); commands start directly until it is back.")
                thread.withMail { $0.connected = false }
                bus.close()
                connection = nil
            }
        }
        connection?.close()
    }
}
