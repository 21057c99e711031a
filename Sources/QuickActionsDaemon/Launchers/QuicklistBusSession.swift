import CSdBus
import Logging

import Glibc

/// One connection to the session bus, used only by the bus thread of `QuicklistExporter`: the
/// dbusmenu object and the LauncherEntry object it serves, the menu it shows, and the match
/// that re-announces the menu when a dock takes the name `com.canonical.Unity` or qactd's GNOME
/// Shell extension takes its own. sd-bus calls the handlers from within `processPending`, on the
/// same thread.
final class QuicklistBusSession {
    static let unityName = "com.canonical.Unity"
    /// The name qactd's GNOME Shell extension owns while it is enabled.
    static let shellExtensionName = "io.qactd.ShellExtension"
    /// Readers of `LauncherEntry.Update` that keep nothing across their own restart and never ask:
    /// when one of these names gets a new owner, the menu is announced again.
    static let readerNames = [unityName, shellExtensionName]
    static let dbusmenuInterface = "com.canonical.dbusmenu"
    static let launcherEntryInterface = "com.canonical.Unity.LauncherEntry"
    /// The dbusmenu protocol version libdbusmenu speaks.
    static let dbusmenuVersion: UInt32 = 3

    private let bus: OpaquePointer
    private let logger: Logger
    private let activate: (QuicklistEntry) -> Void
    /// Where the C trampolines find this object; freed after the slots that point to it.
    private let handlers: UnsafeMutablePointer<CSdBus_Handlers>
    private var slots: [OpaquePointer] = []
    private var menu = QuicklistMenu()
    private var content: QuicklistContent?
    private(set) var uniqueName: String?
    /// The reader names whose owner shows the quicklist, each with that owner's program (what
    /// `Status` names); looked up at the start and again after a name changed hands.
    private(set) var readers: [String: String] = [:]
    private var readersStale = true
    /// Set by the extension's signal (or a new owner of its name), taken by the bus thread.
    private var runningAppsStale = false

    /// Whether the apps running in GNOME Shell may have changed since the last call.
    func takeRunningAppsChange() -> Bool {
        defer { runningAppsStale = false }
        return runningAppsStale
    }

    /// Connects to `address` and exports both objects; the first `show` announces the menu.
    init(address: String, logger: Logger, activate: @escaping (QuicklistEntry) -> Void) throws(SdBusError) {
        let bus = try sdBusOpen(address: address, busClient: true)
        self.bus = bus
        self.logger = logger
        self.activate = activate
        handlers = .allocate(capacity: 1)
        handlers.initialize(to: CSdBus_Handlers(
            method: quicklistMethodTrampoline, property: quicklistPropertyTrampoline, context: Unmanaged.passUnretained(self).toOpaque()))
        do {
            var slot: OpaquePointer?
            try sdBusChecked("sd_bus_add_object_vtable", CSdBus_add_dbusmenu(bus, &slot, QuicklistExporter.menuPath, handlers))
            keep(slot)
            try sdBusChecked("sd_bus_add_object_vtable", CSdBus_add_launcher_entry(bus, &slot, QuicklistExporter.launcherEntryPath, handlers))
            keep(slot)
            // A dock or the shell extension started later (or again) takes its name: tell it about the menu then.
            for name in Self.readerNames {
                let rule = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
                try sdBusChecked("sd_bus_add_match_async", rule.withCString {
                    sd_bus_add_match_async(bus, &slot, $0, quicklistNameOwnerChanged, nil, Unmanaged.passUnretained(self).toOpaque())
                })
                keep(slot)
            }
            // The extension's RunningApps changed: a first export that waits may go ahead.
            let running = "type='signal',sender='\(Self.shellExtensionName)',path='\(ShellExtensionProbe.runningAppsPath)',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'"
            try sdBusChecked("sd_bus_add_match_async", running.withCString {
                sd_bus_add_match_async(bus, &slot, $0, quicklistRunningAppsChanged, nil, Unmanaged.passUnretained(self).toOpaque())
            })
            keep(slot)
            var name: UnsafePointer<CChar>?
            if sd_bus_get_unique_name(bus, &name) >= 0, let name { uniqueName = String(cString: name) }
        } catch {
            close()
            throw error
        }
        logger.info("Serving the quicklist on the session bus as \(uniqueName ?? "?") at \(QuicklistExporter.menuPath).")
    }

    var descriptor: Int32 { sd_bus_get_fd(bus) }
    var pollEvents: Int16 { Int16(truncatingIfNeeded: max(0, sd_bus_get_events(bus))) }

    /// How long `poll` may sleep before sd-bus has a timeout of its own to handle; nil: no limit.
    var timeoutMilliseconds: Int32? { sdBusPollTimeoutMilliseconds(bus) }

    /// Shows `content`: clients holding the old menu are told what changed (`LayoutUpdated`, or
    /// `ItemsPropertiesUpdated` when only titles or icons did), and docks get
    /// `LauncherEntry.Update` for the first content and each new layout.
    func show(_ content: QuicklistContent) throws(SdBusError) {
        let change = menu.replace(with: content.entries)
        let first = self.content == nil
        let uriChanged = self.content?.applicationURI != content.applicationURI
        self.content = content
        switch change {
        case .layout? where !first:
            try emitSignal(path: QuicklistExporter.menuPath, interface: Self.dbusmenuInterface, member: "LayoutUpdated") { writer throws(SdBusError) in
                try writer.append(menu.revision)
                try writer.append(QuicklistMenu.rootID)
            }
            logger.debug("Quicklist: LayoutUpdated, revision \(menu.revision).")
        case .properties(let updated, let removed)? where !first:
            try emitSignal(path: QuicklistExporter.menuPath, interface: Self.dbusmenuInterface, member: "ItemsPropertiesUpdated") { writer throws(SdBusError) in
                try writeProperties(of: updated, names: [], writer)
                try writer.container(DBusType.array, "(ias)") { () throws(SdBusError) in
                    for (id, names) in removed.sorted(by: { $0.key < $1.key }) {
                        try writer.container(DBusType.structure, "ias") { () throws(SdBusError) in
                            try writer.append(id)
                            try writer.container(DBusType.array, "s") { () throws(SdBusError) in
                                for name in names { try writer.append(name) }
                            }
                        }
                    }
                }
            }
            logger.debug("Quicklist: ItemsPropertiesUpdated for \(updated.count) item\(updated.count == 1 ? "" : "s"), revision \(menu.revision).")
        default:
            break
        }
        // New items are announced; new titles or icons (a face made after its item was shown)
        // reach every client holding the menu through ItemsPropertiesUpdated alone.
        if first || change == .layout || uriChanged { try announce() }
    }

    /// `com.canonical.Unity.LauncherEntry.Update(app_uri, {"quicklist": <menu path>})`. The path
    /// goes as a string, as libunity sends it: Plank reads it with `get_string` and Dash to Dock with
    /// `unpack()`, which take a string (or an object path) alike.
    func announce() throws(SdBusError) {
        guard let content else { return }
        try emitSignal(path: QuicklistExporter.launcherEntryPath, interface: Self.launcherEntryInterface, member: "Update") { writer throws(SdBusError) in
            try writeLauncherEntry(content, writer)
        }
        logger.debug("Announced the quicklist of \(content.applicationURI) (\(content.entries.count) items, revision \(menu.revision)).")
    }

    /// Who shows the quicklist now, when a reader name changed hands since the last look (or at
    /// the start): true when `readers` changed. Called by the bus thread outside sd-bus's
    /// handlers, since it waits for the bus daemon's answers. Plasma's task manager owns
    /// `com.canonical.Unity` for its badges and progress bars but draws no quicklist (it reads
    /// the desktop entry's actions): a name held by `plasmashell` is no reader.
    func refreshReaders() -> Bool {
        guard readersStale else { return false }
        readersStale = false
        var found: [String: String] = [:]
        for name in Self.readerNames {
            guard let owner = try? callBus("GetNameOwner", name, read: { reader throws(SdBusError) in try reader.readString() }) else { continue }
            let pid = try? callBus("GetConnectionUnixProcessID", owner, read: { reader throws(SdBusError) in try reader.readUInt32() })
            let program = pid.flatMap(Self.programName) ?? owner
            if program == "plasmashell" { continue }
            found[name] = program
        }
        guard found != readers else { return false }
        readers = found
        logger.info("The quicklist's readers: \(found.isEmpty ? "none" : found.sorted(by: { $0.key < $1.key }).map { "\($0.key) (\($0.value))" }.joined(separator: ", ")).")
        return true
    }

    /// A call to the bus daemon itself with one string argument.
    private func callBus<Value>(_ member: String, _ argument: String, read: (SdBusMessageReader) throws(SdBusError) -> Value) throws(SdBusError) -> Value {
        try sdBusCall(
            bus, destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: member,
            timeoutMicroseconds: 2_000_000, { writer throws(SdBusError) in try writer.append(argument) }, read: read)
    }

    /// The program a process runs, as the kernel names it (`/proc/PID/comm`).
    private static func programName(_ pid: UInt32) -> String? {
        guard let bytes = try? FileIO.readFileIfPresent("/proc/\(pid)/comm"),
              let text = String(validating: bytes, as: UTF8.self)
        else { return nil }
        let name = text.hasSuffix("\n") ? String(text.dropLast()) : text
        return name.isEmpty ? nil : name
    }

    /// Runs every handler sd-bus has queued; throws when the connection is gone.
    func processPending() throws(SdBusError) {
        while try sdBusChecked("sd_bus_process", sd_bus_process(bus, nil)) > 0 {}
        guard sd_bus_is_open(bus) > 0 else { throw SdBusError(call: "sd_bus_process", errno: ECONNRESET) }
    }

    /// Leaves the bus: the slots go first (their objects vanish), then the connection.
    func close() {
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        sd_bus_flush_close_unref(bus)
        handlers.deallocate()
    }

    private func keep(_ slot: OpaquePointer?) {
        if let slot { slots.append(slot) }
    }

    // MARK: Calls

    fileprivate func handleMethod(_ call: OpaquePointer, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let member = sd_bus_message_get_member(call).map { String(cString: $0) } ?? ""
        let reader = SdBusMessageReader(message: call)
        do {
            switch member {
            case "GetLayout":
                let parent = try reader.readInt32()
                let depth = try reader.readInt32()
                let names = try reader.readStrings()
                guard menu.contains(id: parent) else { return unknownItem(parent, error) }
                return try reply(to: call) { writer throws(SdBusError) in
                    try writer.append(menu.revision)
                    try writeLayout(of: parent, depth: depth, names: names, writer)
                }
            case "GetGroupProperties":
                let ids = try reader.readInt32s()
                let names = try reader.readStrings()
                return try reply(to: call) { writer throws(SdBusError) in try writeProperties(of: ids, names: names, writer) }
            case "GetProperty":
                let id = try reader.readInt32()
                let name = try reader.readString()
                guard let properties = menu.properties(of: id) else { return unknownItem(id, error) }
                guard let property = properties.first(where: { $0.key == name }) else {
                    return sd_bus_error_set(error, "org.freedesktop.DBus.Error.InvalidArgs", "Menu item \(id) has no property '\(name)'.")
                }
                return try reply(to: call) { writer throws(SdBusError) in try writer.append(variant: property.value) }
            case "Event":
                let id = try reader.readInt32()
                let event = try reader.readString()
                try reader.skip("v")
                _ = try reader.readUInt32()
                guard handleEvent(event, on: id) else { return unknownItem(id, error) }
                return try reply(to: call) { _ throws(SdBusError) in }
            case "EventGroup":
                let events = try reader.readArray(of: "(isvu)") { () throws(SdBusError) in
                    try reader.readStruct("isvu") { () throws(SdBusError) -> (Int32, String) in
                        let id = try reader.readInt32()
                        let event = try reader.readString()
                        try reader.skip("v")
                        _ = try reader.readUInt32()
                        return (id, event)
                    }
                }
                let unknown = events.filter { !handleEvent($0.1, on: $0.0) }.map(\.0)
                if !events.isEmpty && unknown.count == events.count {
                    return sd_bus_error_set(error, "org.freedesktop.DBus.Error.InvalidArgs", "None of the menu items \(unknown) exists.")
                }
                return try reply(to: call) { writer throws(SdBusError) in try writeInt32s(unknown, writer) }
            case "AboutToShow":
                let id = try reader.readInt32()
                guard menu.contains(id: id) else { return unknownItem(id, error) }
                // The menu is always current: nothing to refresh before it opens.
                return try reply(to: call) { writer throws(SdBusError) in try writer.append(false) }
            case "AboutToShowGroup":
                let ids = try reader.readInt32s()
                return try reply(to: call) { writer throws(SdBusError) in
                    try writeInt32s([], writer)
                    try writeInt32s(ids.filter { !menu.contains(id: $0) }, writer)
                }
            case "Query":
                guard let content else {
                    return sd_bus_error_set(error, "org.freedesktop.DBus.Error.Failed", "The quicklist has no content yet.")
                }
                return try reply(to: call) { writer throws(SdBusError) in try writeLauncherEntry(content, writer) }
            default:
                return sd_bus_error_set(error, "org.freedesktop.DBus.Error.UnknownMethod", "No method '\(member)'.")
            }
        } catch {
            logger.warning("Could not answer the quicklist call \(member): \(error).")
            return -error.errno
        }
    }

    fileprivate func property(_ name: String, _ reply: OpaquePointer) -> Int32 {
        let writer = SdBusMessageWriter(message: reply)
        do {
            switch name {
            case "Version": try writer.append(Self.dbusmenuVersion)
            case "TextDirection": try writer.append("ltr")
            case "Status": try writer.append("normal")
            case "IconThemePath": try writer.container(DBusType.array, "s") { () throws(SdBusError) in }
            default: return -EINVAL
            }
            return 1
        } catch {
            return -error.errno
        }
    }

    fileprivate func runningAppsSignalled() {
        runningAppsStale = true
    }

    fileprivate func readerNameChanged(_ signal: OpaquePointer) {
        let reader = SdBusMessageReader(message: signal)
        guard let name = try? reader.readString(), (try? reader.readString()) != nil, let newOwner = try? reader.readString(),
            Self.readerNames.contains(name)
        else { return }
        readersStale = true
        if name == Self.shellExtensionName { runningAppsStale = true }
        guard !newOwner.isEmpty else { return }
        logger.info("\(newOwner) took \(name); announcing the quicklist to it.")
        do {
            try announce()
        } catch {
            logger.warning("Could not announce the quicklist: \(error).")
        }
    }

    /// "clicked" on an item triggers it; other events ("opened", "hovered", …) need nothing.
    /// False for an id that is not in the menu.
    private func handleEvent(_ event: String, on id: Int32) -> Bool {
        guard menu.contains(id: id) else { return false }
        if event == "clicked", let entry = menu.entry(id: id) {
            logger.info("Quicklist item '\(entry.label)' clicked.", metadata: ["QACTD_SHORTCUT_TYPE": .string(entry.type)])
            activate(entry)
        }
        return true
    }

    private func unknownItem(_ id: Int32, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        sd_bus_error_set(error, "org.freedesktop.DBus.Error.InvalidArgs", "No menu item with id \(id) (menu revision \(menu.revision)).")
    }

    // MARK: Writing

    /// `(ia{sv}av)`: an item, its properties and, down to `depth` levels (-1: all), its children.
    private func writeLayout(of id: Int32, depth: Int32, names: [String], _ writer: SdBusMessageWriter) throws(SdBusError) {
        try writer.container(DBusType.structure, "ia{sv}av") { () throws(SdBusError) in
            try writer.append(id)
            try writer.append(dictionary: menu.properties(of: id, only: names) ?? [])
            try writer.container(DBusType.array, "v") { () throws(SdBusError) in
                guard depth != 0 else { return }
                for child in menu.children(of: id) {
                    try writer.container(DBusType.variant, "(ia{sv}av)") { () throws(SdBusError) in
                        try writeLayout(of: child, depth: depth < 0 ? depth : depth - 1, names: names, writer)
                    }
                }
            }
        }
    }

    /// `a(ia{sv})`: each of `ids` that is in the menu with its properties limited to `names` (all when empty).
    private func writeProperties(of ids: [Int32], names: [String], _ writer: SdBusMessageWriter) throws(SdBusError) {
        try writer.container(DBusType.array, "(ia{sv})") { () throws(SdBusError) in
            for id in ids {
                guard let properties = menu.properties(of: id, only: names) else { continue }
                try writer.container(DBusType.structure, "ia{sv}") { () throws(SdBusError) in
                    try writer.append(id)
                    try writer.append(dictionary: properties)
                }
            }
        }
    }

    private func writeLauncherEntry(_ content: QuicklistContent, _ writer: SdBusMessageWriter) throws(SdBusError) {
        try writer.append(content.applicationURI)
        try writer.append(dictionary: [("quicklist", .string(QuicklistExporter.menuPath))])
    }

    private func writeInt32s(_ values: [Int32], _ writer: SdBusMessageWriter) throws(SdBusError) {
        try writer.container(DBusType.array, "i") { () throws(SdBusError) in
            for value in values { try writer.append(value) }
        }
    }

    /// Sends a method return filled by `fill`; 1 tells sd-bus the call was answered.
    private func reply(to call: OpaquePointer, _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void) throws(SdBusError) -> Int32 {
        var reply: OpaquePointer?
        try sdBusChecked("sd_bus_message_new_method_return", sd_bus_message_new_method_return(call, &reply))
        defer { sd_bus_message_unref(reply) }
        guard let reply else { throw SdBusError(call: "sd_bus_message_new_method_return", errno: ENOMEM) }
        try fill(SdBusMessageWriter(message: reply))
        try sdBusChecked("sd_bus_send", sd_bus_send(nil, reply, nil))
        return 1
    }

    private func emitSignal(
        path: String, interface: String, member: String, _ fill: (SdBusMessageWriter) throws(SdBusError) -> Void
    ) throws(SdBusError) {
        var signal: OpaquePointer?
        try sdBusChecked("sd_bus_message_new_signal", sd_bus_message_new_signal(bus, &signal, path, interface, member))
        defer { sd_bus_message_unref(signal) }
        guard let signal else { throw SdBusError(call: "sd_bus_message_new_signal", errno: ENOMEM) }
        try fill(SdBusMessageWriter(message: signal))
        try sdBusChecked("sd_bus_send", sd_bus_send(bus, signal, nil))
    }
}

// The C side of the vtables and the match calls these; `context` is the session, which the bus
// thread keeps alive for as long as its slots exist.

private func session(_ context: UnsafeMutableRawPointer?) -> QuicklistBusSession? {
    context.map { Unmanaged<QuicklistBusSession>.fromOpaque($0).takeUnretainedValue() }
}

private let quicklistMethodTrampoline: CSdBus_MethodHandler = { call, context, error in
    guard let call, let session = session(context) else { return -EINVAL }
    return session.handleMethod(call, error)
}

private let quicklistPropertyTrampoline: CSdBus_PropertyGetter = { _, property, reply, context, _ in
    guard let property, let reply, let session = session(context) else { return -EINVAL }
    return session.property(String(cString: property), reply)
}

private let quicklistRunningAppsChanged: sd_bus_message_handler_t = { _, context, _ in
    session(context)?.runningAppsSignalled()
    return 0
}

private let quicklistNameOwnerChanged: sd_bus_message_handler_t = { signal, context, _ in
    guard let signal, let session = session(context) else { return 0 }
    session.readerNameChanged(signal)
    return 0
}
