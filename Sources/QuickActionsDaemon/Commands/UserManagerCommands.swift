import CSdBus
import Glibc
import Logging
import SystemCalls

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

    /// How a unit's command ended: `waitStatus` when its main process exited (in `waitpid`'s
    /// encoding), else `problem` says what the manager reported instead; neither when the
    /// connection was lost while it ran.
    struct UnitEnd: Sendable, Equatable {
        var waitStatus: Int32?
        var problem: String?
    }

    /// One command to start as a unit.
    struct Request: Sendable {
        var unit: String
        var argv: [String]
        /// Only what the command gets beyond the manager's own environment: the item's values.
        var environment: [String]
        var description: String
        var onEnd: @Sendable (UnitEnd) -> Void
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
        if case .success(let session) = QuicklistExporter.sessionBusAddress(environment: environment) {
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
        let onEnd: @Sendable (UnitEnd) -> Void
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
                    request.onEnd(UnitEnd(problem: "the user manager cannot be reached"))
                    continue
                }
                let path = ManagerConnection.unitPath(request.unit)
                // Tracked before the call: its signals may come right behind the reply.
                tracked[path] = Tracked(unit: request.unit, onEnd: request.onEnd)
                do {
                    try bus.startTransientUnit(request)
                } catch {
                    tracked[path] = nil
                    request.onEnd(UnitEnd(problem: "the user manager did not start it (\(error))"))
                }
            }
            if stopping { break }
            guard let bus = connection else {
                // Lost: what was being followed cannot be followed any more.
                for (_, unit) in tracked { unit.onEnd(UnitEnd()) }
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
                        unit.onEnd(UnitEnd(waitStatus: waitStatus))
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
                        unit.onEnd(UnitEnd(problem: "the unit became \(activeState) before its command ran\(result)"))
                    case .jobFailed(let result):
                        tracked[signal.path] = nil
                        unit.onEnd(UnitEnd(problem: "the user manager's start job ended with result '\(result)'"))
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

/// What a signal of the manager said about one unit (by its object path).
struct ManagerSignal {
    enum Kind {
        /// `ExecMainCode`/`ExecMainStatus` of the service (code 0: not exited yet).
        case mainExited(code: Int32, status: Int32)
        /// The service's `Result`.
        case result(String)
        /// The unit's `ActiveState`.
        case activeState(String)
        /// The start job ended other than `done`.
        case jobFailed(String)
    }

    var path: String
    var kind: Kind
}

/// The sd-bus connection to the user manager: made at start-up, then handed to the units thread,
/// the only one to use it from then on (sd-bus connections are single-threaded).
final class ManagerConnection: @unchecked Sendable {
    private let bus: OpaquePointer

    init(address: UserManagerCommands.Address) throws(SdBusError) {
        var created: OpaquePointer?
        try sdBusChecked("sd_bus_new", sd_bus_new(&created))
        guard let bus = created else { throw SdBusError(call: "sd_bus_new", errno: ENOMEM) }
        self.bus = bus
        do {
            try sdBusChecked("sd_bus_set_address", address.text.withCString { sd_bus_set_address(bus, $0) })
            if case .sessionBus = address { try sdBusChecked("sd_bus_set_bus_client", sd_bus_set_bus_client(bus, 1)) }
            try sdBusChecked("sd_bus_start", sd_bus_start(bus))
            // On a bus the daemon must be told which signals to send; on the private socket the
            // manager sends every signal to a subscribed connection and the match stays local.
            for rule in [
                "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path_namespace='/org/freedesktop/systemd1/unit'",
                "type='signal',interface='org.freedesktop.systemd1.Manager',member='JobRemoved',path='/org/freedesktop/systemd1'",
            ] {
                try sdBusChecked("sd_bus_add_match", rule.withCString { sd_bus_add_match(bus, nil, $0, unhandledSignal, nil) })
            }
            try call("Subscribe") { _ throws(SdBusError) in }
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
    }

    static func unitPath(_ unit: String) -> String {
        var encoded: UnsafeMutablePointer<CChar>?
        guard sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &encoded) >= 0, let encoded else { return "" }
        defer { free(encoded) }
        return String(cString: encoded)
    }

    var descriptor: Int32 { sd_bus_get_fd(bus) }
    var pollEvents: Int16 { Int16(truncatingIfNeeded: max(0, sd_bus_get_events(bus))) }

    /// `poll`'s timeout for sd-bus's own deadline (a call's timeout, the authentication), -1 without one.
    var timeoutMilliseconds: Int32 {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
    }

    /// `StartTransientUnit(name, "fail", properties, [])`: a service of type `exec` (its start
    /// fails when the program cannot be run), collected once it is inactive or failed.
    func startTransientUnit(_ request: UserManagerCommands.Request) throws(SdBusError) {
        let program = try resolve(request.argv[0])
        try call("StartTransientUnit") { writer throws(SdBusError) in
            try Self.appendStartTransientUnit(request, program: program, to: writer)
        }
    }

    /// The arguments of `StartTransientUnit` (`ssa(sv)a(sa(sv))`) for `request`.
    static func appendStartTransientUnit(
        _ request: UserManagerCommands.Request, program: String, to writer: SdBusMessageWriter
    ) throws(SdBusError) {
        try writer.append(request.unit)
        try writer.append("fail")
        try writer.container(DBusType.array, "(sv)") { () throws(SdBusError) in
            let properties: [(String, DBusVariantValue)] = [
                ("Description", .string(request.description)),
                ("Type", .string("exec")),
                // A program that hands the work to a child and exits (xdg-open) leaves the
                // child running in the unit; the main process's status is still reported.
                ("ExitType", .string("cgroup")),
                ("CollectMode", .string("inactive-or-failed")),
                ("Slice", .string("app.slice")),
                ("Environment", .strings(request.environment)),
            ]
            for (name, value) in properties {
                try writer.container(DBusType.structure, "sv") { () throws(SdBusError) in
                    try writer.append(name)
                    try writer.append(variant: value)
                }
            }
            try writer.container(DBusType.structure, "sv") { () throws(SdBusError) in
                try writer.append("ExecStart")
                try writer.container(DBusType.variant, "a(sasb)") { () throws(SdBusError) in
                    try writer.container(DBusType.array, "(sasb)") { () throws(SdBusError) in
                        try writer.container(DBusType.structure, "sasb") { () throws(SdBusError) in
                            try writer.append(program)
                            try writer.container(DBusType.array, "s") { () throws(SdBusError) in
                                for argument in request.argv { try writer.append(argument) }
                            }
                            try writer.append(false)
                        }
                    }
                }
            }
        }
        try writer.container(DBusType.array, "(sa(sv))") { () throws(SdBusError) in }
    }

    /// The program's path: as given when it has a `/`, else found in the manager's `PATH` (the
    /// one the command runs with), so a missing program is an error here, with its name.
    private func resolve(_ program: String) throws(SdBusError) -> String {
        if program.contains("/") { return program }
        let environment = try managerEnvironment()
        let path = environment.first { $0.hasPrefix("PATH=") }.map { String($0.dropFirst(5)) } ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where folder.hasPrefix("/") {
            let candidate = folder + "/" + program
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw SdBusError(call: "finding '\(program)' in the user manager's PATH", errno: ENOENT)
    }

    private func managerEnvironment() throws(SdBusError) -> [String] {
        var call: OpaquePointer?
        try sdBusChecked("sd_bus_message_new_method_call", sd_bus_message_new_method_call(
            bus, &call, UserManagerCommands.manager, UserManagerCommands.managerPath, "org.freedesktop.DBus.Properties", "Get"))
        defer { sd_bus_message_unref(call) }
        let writer = SdBusMessageWriter(message: call!)
        try writer.append(UserManagerCommands.managerInterface)
        try writer.append("Environment")
        let reply = try send(call!)
        defer { sd_bus_message_unref(reply) }
        return try SdBusMessageReader(message: reply).readVariant("as") { reader throws(SdBusError) in try reader.readStrings() }
    }

    /// Calls a method of the manager and drops its reply.
    private func call(_ member: String, _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void) throws(SdBusError) {
        var call: OpaquePointer?
        try sdBusChecked("sd_bus_message_new_method_call", sd_bus_message_new_method_call(
            bus, &call, UserManagerCommands.manager, UserManagerCommands.managerPath, UserManagerCommands.managerInterface, member))
        defer { sd_bus_message_unref(call) }
        try fill(SdBusMessageWriter(message: call!))
        sd_bus_message_unref(try send(call!))
    }

    private func send(_ call: OpaquePointer) throws(SdBusError) -> OpaquePointer {
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, call, UserManagerCommands.callTimeoutMicroseconds, &error, &reply)
        guard result >= 0, let reply else {
            let name = error.name.map { String(cString: $0) }
            let message = error.message.map { String(cString: $0) }
            throw SdBusError(call: [name, message].compactMap { $0 }.joined(separator: ": ").isEmpty
                ? "sd_bus_call" : [name, message].compactMap { $0 }.joined(separator: ": "), errno: -result)
        }
        return reply
    }

    /// Reads every message that arrived and hands what the manager said about units to `handle`.
    func process(_ handle: (ManagerSignal) -> Void) throws(SdBusError) {
        while true {
            var message: OpaquePointer?
            let result = try sdBusChecked("sd_bus_process", sd_bus_process(bus, &message))
            if let message {
                defer { sd_bus_message_unref(message) }
                for signal in Self.read(message) { handle(signal) }
            }
            if result == 0 { break }
        }
        guard sd_bus_is_open(bus) > 0 else { throw SdBusError(call: "sd_bus_process", errno: ECONNRESET) }
    }

    /// What a `PropertiesChanged` of a unit or a `JobRemoved` says; nothing for any other message.
    private static func read(_ message: OpaquePointer) -> [ManagerSignal] {
        let reader = SdBusMessageReader(message: message)
        if sd_bus_message_is_signal(message, UserManagerCommands.managerInterface, "JobRemoved") > 0 {
            guard (try? reader.readUInt32()) != nil, (try? reader.skip("o")) != nil,
                  let unit = try? reader.readString(), let result = try? reader.readString(), result != "done"
            else { return [] }
            return [ManagerSignal(path: unitPath(unit), kind: .jobFailed(result))]
        }
        guard sd_bus_message_is_signal(message, "org.freedesktop.DBus.Properties", "PropertiesChanged") > 0,
              let path = sd_bus_message_get_path(message).map({ String(cString: $0) }),
              let interface = try? reader.readString()
        else { return [] }
        var code: Int32?
        var status: Int32 = 0
        var signals: [ManagerSignal] = []
        do {
            try reader.readArray(ofEntries: "sv") { reader, name throws(SdBusError) in
            switch (interface, name) {
            case ("org.freedesktop.systemd1.Service", "ExecMainCode"):
                code = try reader.readVariant("i") { reader throws(SdBusError) in try reader.readInt32() }
            case ("org.freedesktop.systemd1.Service", "ExecMainStatus"):
                status = try reader.readVariant("i") { reader throws(SdBusError) in try reader.readInt32() }
            case ("org.freedesktop.systemd1.Service", "Result"):
                let result = try reader.readVariant("s") { reader throws(SdBusError) in try reader.readString() }
                signals.append(ManagerSignal(path: path, kind: .result(result)))
            case ("org.freedesktop.systemd1.Unit", "ActiveState"):
                let state = try reader.readVariant("s") { reader throws(SdBusError) in try reader.readString() }
                signals.append(ManagerSignal(path: path, kind: .activeState(state)))
            default:
                try reader.skip("v")
            }
            }
        } catch {
            return []
        }
        if let code { signals.insert(ManagerSignal(path: path, kind: .mainExited(code: code, status: status)), at: 0) }
        return signals
    }

    func close() {
        sd_bus_flush_close_unref(bus)
    }
}

/// The matches' handler: the signal is left unhandled, so `sd_bus_process` hands it back.
private let unhandledSignal: sd_bus_message_handler_t = { _, _, _ in 0 }
