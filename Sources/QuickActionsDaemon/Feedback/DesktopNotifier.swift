import CSdBus
import Logging
import QuickActions
import QuickActionsProtocol
import Synchronization

import Glibc

/// Shows `FailureNotice`s as desktop notifications: `org.freedesktop.Notifications.Notify` on
/// the session bus, through sd-bus, from a thread of its own (`qactd-notify`, started with the
/// first notice, then asleep in `poll` until the next), so the core only drops a notice into a
/// mailbox and never waits for the bus. Each notification replaces the previous one
/// (`replaces_id`): a burst of failures shows one notification, the latest, instead of a stack.
/// With no session bus or no notification server the notice was logged by the core and nothing
/// more happens; each such state is logged once.
final class DesktopNotifier: Sendable {
    static let service = "org.freedesktop.Notifications"
    static let objectPath = "/org/freedesktop/Notifications"
    /// How long a `Notify` call may take before the server counts as absent.
    static let callTimeoutMicroseconds: UInt64 = 5_000_000

    /// One notice with what the thread needs to show it as the app's.
    struct Request: Sendable {
        var notice: FailureNotice
        /// `[Launcher] DesktopFile=`: the app whose name, icon and desktop-entry hint the notification carries.
        var desktopFile: String
    }

    private struct Mail: Sendable {
        /// Only the newest waiting notice is shown: it would replace the older ones at once anyway.
        var waiting: Request?
        var info = NotificationsInfo(state: NotificationsInfo.State.idle.rawValue)
        var onInfoChange: (@Sendable () -> Void)?
    }

    private let thread: MailboxThread<Mail>
    private let environment: [String: String]
    private let logger: Logger

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
        thread = MailboxThread(named: "qactd-notify", for: "the notifications thread", mail: Mail(), logger: logger)
    }

    /// What `Status` shows; the core sets `Notifications=off` itself.
    var info: NotificationsInfo { thread.withMail { $0.info } }

    /// Called on the notifications thread after each change of `info` (a `Status` encoded before must not be served).
    func onInfoChange(_ action: @escaping @Sendable () -> Void) {
        thread.withMail { $0.onInfoChange = action }
    }

    private func setInfo(_ info: NotificationsInfo) {
        let notify = thread.withMail { mail -> (@Sendable () -> Void)? in
            mail.info = info
            return mail.onInfoChange
        }
        notify?()
    }

    func show(_ request: Request) {
        logger.debug("Notice for the desktop: \(request.notice.summary): \(request.notice.problem)")
        guard !thread.isStopping else { return }
        thread.withMail { $0.waiting = request }
        do {
            try thread.start { [self] in run() }
        } catch {
            logger.warning("Cannot start the notifications thread (\(error)); failures are logged only.")
        }
    }

    /// At shutdown: the thread ends after the notice in hand, if any; later notices are dropped.
    func stop() {
        thread.requestStop()
    }

    // MARK: - The notifications thread

    private func run() {
        var connection: NotificationBusConnection?
        var replacesID: UInt32 = 0
        var lastProblem: String?
        while true {
            let stopping = thread.isStopping
            let request = thread.withMail { mail in
                defer { mail.waiting = nil }
                return mail.waiting
            }
            if let request { notify(request, on: &connection, replacing: &replacesID, lastProblem: &lastProblem) }
            if stopping { break }
            var none: [pollfd] = []
            thread.sleep(polling: &none, timeoutMilliseconds: -1)
        }
        connection?.close()
    }

    /// Shows one notice, making the bus connection when there is none.
    private func notify(
        _ request: Request, on connection: inout NotificationBusConnection?, replacing replacesID: inout UInt32, lastProblem: inout String?
    ) {
        let identity = AppIdentity.lookUp(desktopFile: request.desktopFile, environment: environment)
        do {
            let address = try SessionBus.address(environment: environment).mapError { NotificationProblem.noBus($0.description) }.get()
            // A connection that went away since the last notice is made again, once.
            for attempt in 0..<2 {
                if connection == nil { connection = try NotificationBusConnection(address: address) }
                guard let bus = connection else { break }
                do throws(NotificationProblem) {
                    replacesID = try bus.notify(request.notice, identity: identity, replacing: replacesID)
                } catch .busLost where attempt == 0 {
                    bus.close()
                    connection = nil
                    continue
                }
                break
            }
            lastProblem = nil
            setInfo(NotificationsInfo(state: NotificationsInfo.State.on.rawValue, shown: info.shown + 1))
            logger.debug("Notified: \(request.notice.summary) (\(replacesID)).")
        } catch {
            let problem = "\(error)"
            setInfo(NotificationsInfo(state: NotificationsInfo.State.unavailable.rawValue, message: problem, shown: info.shown))
            if problem != lastProblem {
                logger.info("No desktop notification (\(problem)); the failure is in the log only.")
                lastProblem = problem
            }
        }
    }
}

/// Why a notice could not be shown; each is logged once in a row, none fails anything.
enum NotificationProblem: Error, CustomStringConvertible {
    case noBus(String)
    case busLost(SdBusError)
    case noServer(String)

    var description: String {
        switch self {
        case .noBus(let why): why
        case .busLost(let error): "the session bus connection failed: \(error)"
        case .noServer(let why): "no notification server answers on the session bus: \(why)"
        }
    }
}

/// The app a notification speaks for: its name and icon from its desktop entry, and the
/// desktop-file ID (without `.desktop`) for the `desktop-entry` hint.
struct AppIdentity: Equatable, Sendable {
    var name: String
    var icon: String
    var desktopEntry: String?

    static let daemon = AppIdentity(name: "Quick actions", icon: "dialog-warning", desktopEntry: nil)

    static func lookUp(desktopFile: String, environment: [String: String]) -> AppIdentity {
        guard !desktopFile.isEmpty else { return .daemon }
        let exporter = DesktopEntryExporter(environment: environment, qactlPath: nil)
        guard let document = exporter.appEntryLocation(desktopFile)?.document else { return .daemon }
        let identifier = desktopFile.split(separator: "/").last.map(String.init) ?? desktopFile
        return AppIdentity(
            name: document.value(of: "Name").map(DesktopEntryEscaping.unescapedValue) ?? daemon.name,
            icon: document.value(of: "Icon").map(DesktopEntryEscaping.unescapedValue) ?? daemon.icon,
            desktopEntry: identifier.hasSuffix(".desktop") ? String(identifier.dropLast(8)) : identifier)
    }
}

/// One sd-bus connection to the session bus, used only by the notifications thread.
private final class NotificationBusConnection {
    private let bus: OpaquePointer
    /// Whether the server reads the body as markup (`GetCapabilities` has "body-markup"); asked once.
    private var readsMarkup: Bool?

    init(address: String) throws(NotificationProblem) {
        do throws(SdBusError) {
            bus = try sdBusOpen(address: address, busClient: true)
        } catch where error.call == "sd_bus_new" {
            throw .busLost(error)
        } catch {
            throw .noBus("the session bus at '\(address)' cannot be reached (\(error))")
        }
    }

    /// `Notify(app_name, replaces_id, app_icon, summary, body, actions, hints, expire_timeout)`;
    /// returns the notification's id.
    func notify(_ notice: FailureNotice, identity: AppIdentity, replacing replacesID: UInt32) throws(NotificationProblem) -> UInt32 {
        if readsMarkup == nil {
            let capabilities = try self.call("GetCapabilities") { _ throws(SdBusError) in } read: { reader throws(SdBusError) in
                try reader.readStrings()
            }
            readsMarkup = capabilities.contains("body-markup")
        }
        // A server that reads the body as markup would read a value's '<' or '&' as markup: escaped.
        let body = readsMarkup == true ? MarkupEscaping.text(notice.problem) : notice.problem
        return try self.call("Notify") { writer throws(SdBusError) in
            try writer.append(identity.name)
            try writer.append(replacesID)
            try writer.append(identity.icon)
            try writer.append(notice.summary)
            try writer.append(body)
            try writer.container(DBusType.array, "s") { () throws(SdBusError) in }
            var hints: [(key: String, value: DBusVariantValue)] = [("urgency", .byte(1))]
            if let entry = identity.desktopEntry { hints.append(("desktop-entry", .string(entry))) }
            try writer.append(dictionary: hints)
            try writer.append(Int32(-1))
        } read: { reader throws(SdBusError) in
            try reader.readUInt32()
        }
    }

    /// Calls a method of the notification server and reads its reply.
    private func call<Value>(
        _ member: String, _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void,
        read: (SdBusMessageReader) throws(SdBusError) -> Value
    ) throws(NotificationProblem) -> Value {
        var call: OpaquePointer?
        do throws(SdBusError) {
            try sdBusChecked("sd_bus_message_new_method_call", sd_bus_message_new_method_call(
                bus, &call, DesktopNotifier.service, DesktopNotifier.objectPath, DesktopNotifier.service, member))
            guard let call else { throw SdBusError(call: "sd_bus_message_new_method_call", errno: ENOMEM) }
            try fill(SdBusMessageWriter(message: call))
        } catch {
            sd_bus_message_unref(call)
            throw .busLost(error)
        }
        defer { sd_bus_message_unref(call) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, call, DesktopNotifier.callTimeoutMicroseconds, &error, &reply)
        defer { sd_bus_message_unref(reply) }
        // Whatever else arrived (the server's NotificationClosed signals) is read and dropped.
        while sd_bus_process(bus, nil) > 0 {}
        guard result >= 0, let reply else {
            if error.name != nil || -result == ETIMEDOUT {
                let name = error.name.map { String(cString: $0) } ?? "timed out"
                let message = error.message.map { String(cString: $0) }.map { ": \($0)" } ?? ""
                throw .noServer(name + message)
            }
            throw .busLost(SdBusError(call: "sd_bus_call", errno: -result))
        }
        do {
            return try read(SdBusMessageReader(message: reply))
        } catch {
            throw .noServer("the \(member) reply is not what the specification says (\(error))")
        }
    }

    func close() {
        sd_bus_flush_close_unref(bus)
    }
}
