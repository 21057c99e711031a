import CSdBus
import QuickActionsProtocol

import Glibc

/// Asks GNOME Shell on the session bus how it holds qactd's extension
/// (`org.gnome.Shell.Extensions.GetExtensionInfo`), for `Status`: whether the dash's and the app
/// grid's menus show the live quicklist, and the one command that turns it on when they do not.
/// Only in a GNOME session (`XDG_CURRENT_DESKTOP`, which GNOME's session gives the user manager),
/// each time on a connection of its own: a `Status` is rare, and the shell may have come or gone
/// since the last.
struct ShellExtensionProbe: Sendable {
    static let uuid = "quick-actions@qactd.io"
    /// A shell that does not answer within this leaves the field out rather than hold `Status`.
    static let callTimeoutMicroseconds: UInt64 = 500_000

    let environment: [String: String]

    /// Whether the session is GNOME's (`GNOME`, or `ubuntu:GNOME` and the like).
    var applies: Bool {
        (environment["XDG_CURRENT_DESKTOP"] ?? "").split(separator: ":").contains { $0.lowercased() == "gnome" }
    }

    /// A connection of its own to the session bus, in a GNOME session only; the caller closes it.
    private func connect() -> OpaquePointer? {
        guard applies, case .success(let address) = SessionBus.address(environment: environment) else { return nil }
        return try? sdBusOpen(address: address, busClient: true)
    }

    /// Whether a GNOME Shell owns its name on the session bus: false outside a GNOME session and
    /// when the bus cannot be reached. What `ExportRetirement` decides by.
    func shellIsRunning() -> Bool {
        guard let bus = connect() else { return false }
        defer { sd_bus_flush_close_unref(bus) }
        let owner = try? sdBusCall(
            bus, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "GetNameOwner",
            timeoutMicroseconds: Self.callTimeoutMicroseconds, { writer throws(SdBusError) in try writer.append("org.gnome.Shell") },
            read: { reader throws(SdBusError) in try reader.readString() })
        return owner != nil
    }

    /// The desktop IDs of the apps GNOME Shell holds as running (a window open, or starting), as
    /// qactd's extension publishes them (`RunningApps`); nil outside GNOME or without the extension.
    func runningApps() -> Set<String>? {
        guard let bus = connect() else { return nil }
        defer { sd_bus_flush_close_unref(bus) }
        let ids = try? sdBusCall(
            bus, destination: QuicklistBusSession.shellExtensionName, path: Self.runningAppsPath, interface: "org.freedesktop.DBus.Properties",
            member: "Get", timeoutMicroseconds: Self.callTimeoutMicroseconds,
            { writer throws(SdBusError) in
                try writer.append(QuicklistBusSession.shellExtensionName)
                try writer.append("RunningApps")
            },
            read: { reader throws(SdBusError) in try reader.readVariant("as") { value throws(SdBusError) in try value.readStrings() } })
        return ids.map(Set.init)
    }

    /// What `ExportRetirement` decides by: whether a GNOME Shell runs, and which apps it runs.
    func shell() -> ExportRetirement.Shell {
        shellIsRunning() ? .gnomeShell(runningApps: runningApps()) : .noGnomeShell
    }

    /// Where the extension serves `RunningApps`.
    static let runningAppsPath = "/io/qactd/ShellExtension"

    /// The extension's state as the shell reports it; nil outside GNOME, or when no shell answers.
    func read() -> ShellExtensionInfo? {
        guard let bus = connect() else { return nil }
        defer { sd_bus_flush_close_unref(bus) }
        var call: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &call, "org.gnome.Shell", "/org/gnome/Shell", "org.gnome.Shell.Extensions", "GetExtensionInfo") >= 0,
              let call
        else { return nil }
        defer { sd_bus_message_unref(call) }
        // Asking must never start a shell where none runs.
        guard sd_bus_message_set_auto_start(call, 0) >= 0, (try? SdBusMessageWriter(message: call).append(Self.uuid)) != nil else { return nil }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let result = sd_bus_call(bus, call, Self.callTimeoutMicroseconds, &error, &reply)
        defer { sd_bus_message_unref(reply) }
        guard result >= 0, let reply else { return nil }
        // An a{sv} of the shell's extension object: numbers are doubles, an unknown UUID gives {}.
        var state: Double?
        var message: String?
        do throws(SdBusError) {
            try SdBusMessageReader(message: reply).readArray(ofEntries: "sv") { reader, key throws(SdBusError) in
                switch key {
                case "state": state = try reader.readVariant("d") { value throws(SdBusError) in try value.readDouble() }
                case "error": message = try reader.readVariant("s") { value throws(SdBusError) in try value.readString() }
                default: try reader.skip("v")
                }
            }
        } catch {
            return nil
        }
        return Self.info(shellState: state.map { Int($0) }, error: message)
    }

    /// What `Status` says for the shell's `state` number (nil: the shell does not know the
    /// extension) and its `error` text.
    static func info(shellState: Int?, error: String?) -> ShellExtensionInfo {
        let state = shellState.map(ShellExtensionInfo.State.init(shellState:)) ?? .notInstalled
        let message: String?
        switch state {
        case .notInstalled:
            message = "GNOME Shell does not know it: installed after the shell started (log in again), or not installed"
        case .outOfDate:
            message = "its metadata.json does not list this GNOME Shell's version"
        case .error:
            message = error.flatMap { $0.isEmpty ? nil : $0 }
        case .disabled, .active, .other:
            message = nil
        }
        let enable = state == .disabled || state == .other ? ShellExtensionInfo.enableCommand(uuid: uuid) : nil
        return ShellExtensionInfo(uuid: uuid, state: state.rawValue, shellState: shellState, message: message, enable: enable)
    }
}
