import CSdBus
import Glibc

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
        let onBus = if case .sessionBus = address { true } else { false }
        let bus = try sdBusOpen(address: address.text, busClient: onBus)
        self.bus = bus
        do {
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
    var timeoutMilliseconds: Int32 { sdBusPollTimeoutMilliseconds(bus) ?? -1 }

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
        try call("Get", of: "org.freedesktop.DBus.Properties") { writer throws(SdBusError) in
            try writer.append(UserManagerCommands.managerInterface)
            try writer.append("Environment")
        } read: { reply throws(SdBusError) in
            try reply.readVariant("as") { reader throws(SdBusError) in try reader.readStrings() }
        }
    }

    /// Calls a method of the manager (of its `interface`) with the arguments `fill` appends, and
    /// hands the reply to `read`.
    private func call<Value>(
        _ member: String, of interface: String = UserManagerCommands.managerInterface,
        _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void,
        read: (SdBusMessageReader) throws(SdBusError) -> Value = { _ throws(SdBusError) in }
    ) throws(SdBusError) -> Value {
        try sdBusCall(
            bus, destination: UserManagerCommands.manager, path: UserManagerCommands.managerPath, interface: interface, member: member,
            timeoutMicroseconds: UserManagerCommands.callTimeoutMicroseconds, fill, read: read)
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
