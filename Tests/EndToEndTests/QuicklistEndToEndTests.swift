import Foundation
import TestSupport
import XCTest

/// A private session bus for one test: `dbus-daemon --session` listening on a socket in the
/// test's folder, so the address stays the same across a restart.
final class PrivateSessionBus {
    let socketPath: String
    var address: String { "unix:path=\(socketPath)" }
    private var process: Process?

    init(in folder: URL) throws {
        socketPath = folder.appendingPathComponent("bus").path
        try start()
    }

    deinit { stop() }

    func start() throws {
        try? FileManager.default.removeItem(atPath: socketPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--session", "--nofork", "--nopidfile", "--address=\(address)"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        XCTAssertTrue(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: self.socketPath) }, "dbus-daemon did not listen")
    }

    /// Kills the bus as a crash does: every client loses its connection at once.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// The live quicklist on the session bus, read by libdbusmenu's own client
/// (the library Plank and Dash to Dock use) through Debian's python3-gi, on a private
/// dbus-daemon, with the built qactd. Each test takes a few seconds.
final class QuicklistEndToEndTests: XCTestCase {
    static let clientScript = DaemonFixture.repository.appendingPathComponent("Tests/integration/dbusmenu-client.py").path
    static let desktopFileID = "org.example.Contacts.desktop"
    static let menuPath = "/io/qactd/QuickActions/menu"

    override func setUpWithError() throws {
        for tool in ["/usr/bin/dbus-daemon", "/usr/bin/python3"] where !FileManager.default.isExecutableFile(atPath: tool) {
            try Self.missing("\(tool) is missing")
        }
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('Dbusmenu', '0.4')"])
        if probe.status != 0 { try Self.missing("gir1.2-dbusmenu-glib-0.4 is missing (\(probe.output))") }
    }

    /// A tool the test drives is not installed: skipped on a developer's machine, a failure in CI
    /// (which runs scripts/install-deps --test first).
    static func missing(_ what: String) throws {
        throw unavailable("\(what): run scripts/install-deps --test")
    }

    private func makeFixture(bus: PrivateSessionBus?, dynamicItems: String = "quicklist") throws -> DaemonFixture {
        let fixture = try DaemonFixture(extraConfiguration: """
            [Launcher]
            DesktopFile=\(Self.desktopFileID)
            DynamicItems=\(dynamicItems)
            """)
        fixture.daemonEnvironment["XDG_DATA_HOME"] = fixture.root.appendingPathComponent("data").path
        fixture.daemonEnvironment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("runtime").path
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus?.address ?? ""
        return fixture
    }

    private func quicklist(_ fixture: DaemonFixture) -> [String: Any] {
        ((try? fixture.qactl(["status", "--json"]).json())?["quicklist"] as? [String: Any]) ?? [:]
    }

    /// Waits until the daemon says the quicklist is served; returns its bus name.
    private func waitUntilServed(_ fixture: DaemonFixture, file: StaticString = #filePath, line: UInt = #line) -> String {
        let served = waitUntil(timeout: 10) { self.quicklist(fixture)["state"] as? String == "on" }
        XCTAssertTrue(served, "the quicklist is not on: \(quicklist(fixture))\n\(fixture.log())", file: file, line: line)
        return quicklist(fixture)["busName"] as? String ?? ""
    }

    /// The titles of the displayed dynamic items, as `qactl list` shows them.
    private func displayedDynamicTitles(_ fixture: DaemonFixture) throws -> [String] {
        let items = try fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]] ?? []
        return items.filter { $0["source"] as? String == "dynamic" }.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    private func client(_ arguments: [String], bus: PrivateSessionBus, fixture: DaemonFixture, name: String) throws -> BackgroundProcess {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let process = try BackgroundProcess(
            "/usr/bin/python3", [Self.clientScript] + arguments, environment: environment,
            outputFile: fixture.root.appendingPathComponent("\(name).out"), withInput: true)
        XCTAssertTrue(waitUntil(timeout: 10) { process.jsonLines.contains { $0["ready"] as? Bool == true } }, process.output)
        return process
    }

    private func lastLabels(_ client: BackgroundProcess) -> [String]? {
        client.jsonLines.last { $0["labels"] != nil }?["labels"] as? [String]
    }

    /// The app resigns active after ada-lovelace stopped being a favorite.
    private func changeFavorites(_ fixture: DaemonFixture) throws {
        try fixture.write(contact: "personal/ada-lovelace.vcf", """
            BEGIN:VCARD
            VERSION:3.0
            UID:ada-lovelace
            FN:Ada Lovelace
            END:VCARD

            """)
        XCTAssertTrue(waitUntil(timeout: 10) { (try? fixture.qactl(["status", "--json"]).json()["favorites"] as? Int) == 3 }, fixture.log())
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
    }

    func testLibdbusmenuClientSeesTheDisplayedDynamicItemsFollowsAChangeAndAClickTriggers() throws {
        let fixture = try makeFixture(bus: nil)
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)  // the first launch: favorites are displayed from now on
        let busName = waitUntilServed(fixture)
        let expected = try displayedDynamicTitles(fixture)
        XCTAssertEqual(expected.count, 2, "two static items and a display limit of 4 leave two favorites")
        XCTAssertEqual(quicklist(fixture)["objectPath"] as? String, Self.menuPath)
        XCTAssertEqual(quicklist(fixture)["items"] as? Int, 2)

        let menu = try client(["follow", busName, Self.menuPath], bus: bus, fixture: fixture, name: "follow")
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == expected }, "menu: \(menu.output), expected \(expected)")

        try changeFavorites(fixture)
        let changed = try displayedDynamicTitles(fixture)
        XCTAssertNotEqual(changed, expected)
        XCTAssertFalse(changed.contains("Ada Lovelace"))
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == changed }, "menu: \(menu.output), expected \(changed)")

        // The same favorite under a new name: the client hears of new properties (ItemsPropertiesUpdated).
        let renamedLayouts = menu.jsonLines.count
        try fixture.write(contact: "personal/arnold-schoenberg.vcf", """
            BEGIN:VCARD
            VERSION:3.0
            FN:Arnold Schoenberg
            X-FAVORITE:1
            END:VCARD

            """)
        XCTAssertTrue(waitUntil(timeout: 10) {
            _ = fixture.qactl(["resign-active"])
            return (try? self.displayedDynamicTitles(fixture))?.contains("Arnold Schoenberg") == true
        }, fixture.log())
        let renamed = try displayedDynamicTitles(fixture)
        XCTAssertEqual(renamed.count, changed.count)
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == renamed }, "menu: \(menu.output), expected \(renamed)")
        XCTAssertGreaterThan(menu.jsonLines.count, renamedLayouts)
        XCTAssertTrue(fixture.log().contains("ItemsPropertiesUpdated for 1 item"), "only the title changed: \(fixture.log())")

        // No app is connected: the click leaves the item for the app's launch, exactly as Trigger does.
        let chosen = try XCTUnwrap(renamed.last)
        menu.send("click \(chosen)")
        XCTAssertTrue(waitUntil(timeout: 10) { menu.jsonLines.contains { $0["clicked"] as? String == chosen } }, menu.output)
        XCTAssertTrue(menu.jsonLines.contains { $0["clicked"] as? String == chosen && $0["error"] is NSNull }, menu.output)
        let pending = try XCTUnwrap(waitForPendingLaunchItem(fixture), fixture.log())
        XCTAssertEqual(pending["title"] as? String, chosen)
        XCTAssertEqual(pending["type"] as? String, "FavoriteAction")
        let usage = try fixture.qactl(["status", "--json"]).json()["usage"] as? [String: Int] ?? [:]
        XCTAssertEqual(usage.values.reduce(0, +), 1, "one trigger counted: \(usage)")

        // With the app running, a click is handed to it, as Trigger's warm delivery is.
        let app = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json"], environment: fixture.environment, outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, app.output)
        let first = try XCTUnwrap(renamed.first)
        menu.send("click \(first)")
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.contains { $0["event"] as? String == "action" } }, app.output)
        let action = try XCTUnwrap(app.jsonLines.first { $0["event"] as? String == "action" })
        XCTAssertEqual((action["item"] as? [String: Any])?["title"] as? String, first, app.output)
        XCTAssertEqual(action["handled"] as? Bool, true, app.output)
    }

    /// `Order=usage` (the default): Grace Hopper, third of four favorites by name and not
    /// displayed, is chosen three times; once the app resigns active she comes first in `List`,
    /// in the quicklist a dock reads through libdbusmenu, and in the exported desktop entry's
    /// actions, and `qactl list --all` shows her score.
    func testAFavoriteChosenThreeTimesComesFirstInTheListTheQuicklistAndTheDesktopEntry() throws {
        let fixture = try makeFixture(bus: nil)
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        // The app's own entry, installed system-wide: the export copies it with the quick actions added.
        let applications = fixture.root.appendingPathComponent("share/applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Contacts\nExec=/bin/true\n"
            .write(to: applications.appendingPathComponent(Self.desktopFileID), atomically: true, encoding: .utf8)
        fixture.daemonEnvironment["XDG_DATA_DIRS"] = fixture.root.appendingPathComponent("share").path
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let busName = waitUntilServed(fixture)
        XCTAssertEqual(try displayedDynamicTitles(fixture), ["Ada Lovelace", "Arnold Schönberg"], "by name before any choice")
        let menu = try client(["follow", busName, Self.menuPath], bus: bus, fixture: fixture, name: "follow")
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == ["Ada Lovelace", "Arnold Schönberg"] }, menu.output)

        XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "arnold-schoenberg"]).status, 0, fixture.log())
        for _ in 1...3 {
            XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "grace-hopper"]).status, 0, fixture.log())
        }
        XCTAssertEqual(try displayedDynamicTitles(fixture), ["Ada Lovelace", "Arnold Schönberg"], "the set changes when the app resigns active")
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(try displayedDynamicTitles(fixture), ["Grace Hopper", "Arnold Schönberg"])
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == ["Grace Hopper", "Arnold Schönberg"] }, menu.output)

        // The score: 3 for three choices just made (decayed by seconds of a 14-day half-life).
        let all = try fixture.qactl(["list", "--all", "--json"]).json()["items"] as? [[String: Any]] ?? []
        let grace = try XCTUnwrap(all.first { Self.title($0) == "Grace Hopper" })
        let usage = try XCTUnwrap(grace["usage"] as? [String: Any], "\(grace)")
        XCTAssertEqual(try XCTUnwrap(usage["score"] as? Double), 3, accuracy: 0.01)
        XCTAssertNil(all.first { Self.title($0) == "Ada Lovelace" }?["usage"], "never chosen")
        let table = fixture.qactl(["list", "--all"]).stdout
        let graceLine = try XCTUnwrap(table.split(separator: "\n").first { $0.contains("Grace Hopper") }, table)
        XCTAssertTrue(table.split(separator: "\n").first?.contains("SCORE") == true, table)
        XCTAssertTrue(graceLine.hasSuffix("3.00"), "\(graceLine)")

        // The same order in the desktop entry every launcher reads.
        try fixture.writeConfiguration("[Launcher]\nDesktopFile=\(Self.desktopFileID)\nDynamicItems=desktop-entry\n")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        let names = { () -> [String] in
            guard let path = (try? fixture.qactl(["status", "--json"]).json())?["desktopEntry"].flatMap({ ($0 as? [String: Any])?["path"] as? String }),
                  let text = try? String(contentsOfFile: path, encoding: .utf8)
            else { return [] }
            return Self.actionNames(text)
        }
        XCTAssertTrue(waitUntil(timeout: 10) { names() == ["Search", "Share", "Grace Hopper", "Arnold Schönberg"] }, "\(names())\n\(fixture.log())")
    }

    private static func title(_ row: [String: Any]) -> String? {
        (row["item"] as? [String: Any])?["title"] as? String
    }

    /// The `Name=` of each `[Desktop Action …]` group, in the order `Actions=` lists them.
    private static func actionNames(_ text: String) -> [String] {
        var group = ""
        var names: [String: String] = [:]
        var order: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("[") {
                group = line
            } else if group == "[Desktop Entry]", line.hasPrefix("Actions=") {
                order = line.dropFirst("Actions=".count).split(separator: ";").map(String.init)
            } else if line.hasPrefix("Name="), group.hasPrefix("[Desktop Action ") {
                names[String(group.dropFirst("[Desktop Action ".count).dropLast())] = String(line.dropFirst("Name=".count))
            }
        }
        return order.compactMap { names[$0] }
    }

    private func waitForPendingLaunchItem(_ fixture: DaemonFixture) -> [String: Any]? {
        var pending: [String: Any]?
        waitUntil(timeout: 10) {
            pending = (try? fixture.qactl(["status", "--json"]).json())?["pendingLaunchItem"] as? [String: Any]
            return pending != nil
        }
        return pending
    }

    /// The objects as the dbusmenu specification (libdbusmenu's dbus-menu.xml, version 3) and
    /// libunity's LauncherEntry declare them, read back by GLib through Introspect.
    func testTheMenuAndTheLauncherEntryHaveTheSpecifiedMethodsSignalsAndProperties() throws {
        let fixture = try makeFixture(bus: nil)
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try fixture.start()
        let busName = waitUntilServed(fixture)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let result = DaemonFixture.run(
            "/usr/bin/python3", [Self.clientScript, "describe", busName, Self.menuPath, "/io/qactd/QuickActions/LauncherEntry"],
            environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let described = try XCTUnwrap((try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any], result.stdout)
        let menu = try XCTUnwrap(described["dbusmenu"] as? [String: [String: String]])
        XCTAssertEqual(menu["methods"], [
            "GetLayout": "iias->u(ia{sv}av)", "GetGroupProperties": "aias->a(ia{sv})", "GetProperty": "is->v",
            "Event": "isvu->", "EventGroup": "a(isvu)->ai", "AboutToShow": "i->b", "AboutToShowGroup": "ai->aiai",
        ])
        XCTAssertEqual(menu["signals"], [
            "ItemsPropertiesUpdated": "a(ia{sv})a(ias)", "LayoutUpdated": "ui", "ItemActivationRequested": "iu",
        ])
        XCTAssertEqual(menu["properties"], ["Version": "u", "TextDirection": "s", "Status": "s", "IconThemePath": "as"])
        let values = try XCTUnwrap(described["values"] as? [String: Any])
        XCTAssertEqual(values["Version"] as? Int, 3)
        XCTAssertEqual(values["TextDirection"] as? String, "ltr")
        XCTAssertEqual(values["Status"] as? String, "normal")
        XCTAssertEqual(values["IconThemePath"] as? [String], [])
        let entry = try XCTUnwrap(described["launcherEntry"] as? [String: [String: String]])
        XCTAssertEqual(entry["methods"], ["Query": "->sa{sv}"])
        XCTAssertEqual(entry["signals"], ["Update": "sa{sv}"])
        let query = try XCTUnwrap(described["query"] as? [String: Any])
        XCTAssertEqual(query["uri"] as? String, "application://\(Self.desktopFileID)")
        XCTAssertEqual((query["properties"] as? [String: Any])?["quicklist"] as? String, Self.menuPath)
        let group = try XCTUnwrap(described["group"] as? [[Any]], "\(described["group"] ?? "none")")
        XCTAssertEqual(group.count, 1, "the unknown id is left out: \(group)")
        XCTAssertEqual(group.first?.first as? Int, 0)
        XCTAssertEqual((group.first?.last as? [String: Any])?.mapValues { "\($0)" }, ["children-display": "submenu"])
    }

    func testLauncherEntryUpdateIsEmittedAtStartOnEachChangeAndWhenADockAppears() throws {
        let fixture = try makeFixture(bus: nil)
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let updates = try client(["updates"], bus: bus, fixture: fixture, name: "updates")
        func updateCount() -> Int { updates.jsonLines.filter { $0["uri"] != nil }.count }

        try fixture.start()
        let busName = waitUntilServed(fixture)
        XCTAssertTrue(waitUntil(timeout: 10) { updateCount() == 1 }, updates.output)
        let first = try XCTUnwrap(updates.jsonLines.first { $0["uri"] != nil })
        XCTAssertEqual(first["uri"] as? String, "application://\(Self.desktopFileID)")
        XCTAssertEqual(first["quicklist"] as? String, Self.menuPath)
        XCTAssertEqual(first["type"] as? String, "s", "the menu's path goes as a string, as libunity sends it")
        XCTAssertEqual(first["sender"] as? String, busName)

        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)  // first launch: the favorites appear
        XCTAssertTrue(waitUntil(timeout: 10) { updateCount() == 2 }, updates.output)
        try changeFavorites(fixture)
        XCTAssertTrue(waitUntil(timeout: 10) { updateCount() == 3 }, updates.output)
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)  // nothing changed: nothing announced
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)

        updates.send("own-unity")
        // The bus keeps one sender's signals in order, so the announcement the new dock brings
        // comes after any the unchanged ResignActive might wrongly have made.
        func announcedToTheDock() -> Bool {
            let lines = updates.jsonLines
            guard let owned = lines.firstIndex(where: { $0["owned"] as? String == "com.canonical.Unity" }) else { return false }
            return lines[owned...].contains { $0["uri"] != nil }
        }
        XCTAssertTrue(waitUntil(timeout: 10, announcedToTheDock), updates.output)
        XCTAssertEqual(updateCount(), 4, "one announcement at start, one per change, one for the dock: \(updates.output)")
    }

    /// `DynamicItems=auto`, the default: while nobody reads the quicklist the desktop entry holds
    /// the favorites (as every launcher reads it); a dock taking `com.canonical.Unity` makes the
    /// quicklist their one place within a second, and once it has been gone for the hold the
    /// entry takes them back. Status names the reader.
    func testByDefaultTheFavoritesAreInTheEntryOnlyWhileNoDockReadsTheQuicklist() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[Launcher]\nDesktopFile=\(Self.desktopFileID)\n[Shortcuts]\nDisplayLimit=20\n")
        let bus = try PrivateSessionBus(in: fixture.root)
        let exported = try fixture.installAppEntry(
            "[Desktop Entry]\nType=Application\nName=Contacts\nExec=/bin/true\n", name: Self.desktopFileID)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        fixture.daemonEnvironment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("runtime").path
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        func entry() -> String { (try? String(contentsOfFile: exported, encoding: .utf8)) ?? "" }
        XCTAssertTrue(waitUntil(timeout: 10) { entry().contains("Name=Ada Lovelace") }, "no reader: the entry holds the favorites\n\(fixture.log())")
        XCTAssertTrue(entry().contains("Name=Search"))
        let busName = waitUntilServed(fixture)
        XCTAssertNil(quicklist(fixture)["readers"], "\(quicklist(fixture))")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("shown by no dock or shell extension now"), fixture.qactl(["status"]).stdout)

        let dock = try client(["updates"], bus: bus, fixture: fixture, name: "dock")
        dock.send("own-unity")
        XCTAssertTrue(waitUntil(timeout: 10) { dock.jsonLines.contains { $0["owned"] as? String == "com.canonical.Unity" } }, dock.output)
        let owned = ContinuousClock.now
        XCTAssertTrue(waitUntil(timeout: 1) { !entry().contains("Name=Ada Lovelace") }, "a dock reads the quicklist: the favorites leave the entry\n\(fixture.log())")
        print("auto: favorites left the entry \(ContinuousClock.now - owned) after a dock took com.canonical.Unity")
        XCTAssertTrue(entry().contains("Name=Search"), "static items stay in the entry")
        let menu = try client(["follow", busName, Self.menuPath], bus: bus, fixture: fixture, name: "menu")
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu)?.contains("Ada Lovelace") == true }, menu.output)
        let readers = quicklist(fixture)["readers"] as? [String] ?? []
        XCTAssertEqual(readers.count, 1, "\(quicklist(fixture))")
        XCTAssertTrue(readers.first?.hasPrefix("com.canonical.Unity (") == true, "\(readers)")

        // The dock goes: after the hold, and not before, the entry takes them back.
        dock.closeInput()
        let gone = ContinuousClock.now
        XCTAssertTrue(waitUntil(timeout: 10) { entry().contains("Name=Ada Lovelace") }, "\(fixture.log())")
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - gone, .seconds(2), "the favorites came back before the hold")
        XCTAssertNil(quicklist(fixture)["readers"])
    }

    func testTheBusGoingAwayAndComingBackIsSurvived() throws {
        let fixture = try makeFixture(bus: nil)
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        _ = waitUntilServed(fixture)

        bus.stop()
        XCTAssertTrue(waitUntil(timeout: 10) { self.quicklist(fixture)["state"] as? String == "waiting" }, "\(quicklist(fixture))")
        XCTAssertEqual(fixture.qactl(["list"]).status, 0, "the daemon serves its socket without the bus")

        try bus.start()
        let after = waitUntilServed(fixture)
        // A fresh dbus-daemon numbers its clients from :1.0 again, so the name cannot tell; the log can.
        XCTAssertEqual(fixture.log().components(separatedBy: "Serving the quicklist on the session bus").count - 1, 2, fixture.log())
        XCTAssertTrue(fixture.log().contains("Lost the session bus"), fixture.log())
        let menu = try client(["follow", after, Self.menuPath], bus: bus, fixture: fixture, name: "follow")
        let expected = try displayedDynamicTitles(fixture)
        XCTAssertTrue(waitUntil(timeout: 10) { self.lastLabels(menu) == expected }, "menu: \(menu.output), expected \(expected)")

        // A stop leaves the bus and ends the bus thread: the daemon exits 0, promptly.
        XCTAssertEqual(fixture.stop(), 0, fixture.log())
        XCTAssertFalse(hasOwner(after, on: bus))
    }

    func testWithoutASessionBusEverythingElseWorksAndStatusSaysWhy() throws {
        let fixture = try makeFixture(bus: nil)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = ""
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let status = quicklist(fixture)
        XCTAssertEqual(status["state"] as? String, "off")
        XCTAssertTrue((status["message"] as? String ?? "").contains("no session bus"), "\(status)")
        XCTAssertEqual(try displayedDynamicTitles(fixture).count, 2)
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("no session bus"), fixture.qactl(["status"]).stdout)
    }

    /// A PNG of one solid colour, made by Debian's python3-pil.
    static func solidPNG(_ rgb: (Int, Int, Int), side: Int = 64) throws -> Data {
        let made = runCommand([
            "/usr/bin/python3", "-c",
            "import base64, io, sys; from PIL import Image; b = io.BytesIO(); "
                + "Image.new('RGB', (\(side), \(side)), (\(rgb.0), \(rgb.1), \(rgb.2))).save(b, 'PNG'); print(base64.b64encode(b.getvalue()).decode())",
        ])
        if made.status != 0 { try missing("python3-pil (PIL) cannot make a PNG: \(made.output)") }
        return try XCTUnwrap(Data(base64Encoded: made.output.trimmingCharacters(in: .whitespacesAndNewlines)), made.output)
    }

    /// Ada Lovelace's demo card with a photo (a PNG, inline as vCard 3.0 has it).
    static func adaCard(photo: Data) -> String {
        "BEGIN:VCARD\nVERSION:3.0\nUID:ada-lovelace\nFN:Ada Lovelace\nN:Lovelace;Ada;;;\nEMAIL:ada@analytical.example\n"
            + "CATEGORIES:friends,favorite\nPHOTO;ENCODING=b;TYPE=PNG:\(photo.base64EncodedString())\nEND:VCARD\n"
    }

    private func icons(_ client: BackgroundProcess) -> [String: [String: Any]] {
        (client.jsonLines.last { $0["icons"] != nil }?["icons"] as? [String: [String: Any]]) ?? [:]
    }

    private static func pixel(_ icon: [String: Any]?, _ name: String) -> [Int]? {
        (icon?["image"] as? [String: Any])?[name] as? [Int]
    }

    /// `FavoriteFaces=yes`: a favorite's face is its image in the quicklist (`icon-data`, the
    /// face's file: a photo's PNG picture, a monogram's SVG, which GdkPixbuf's loader draws as a
    /// dock's menu does): Ada's photo, cut round;
    /// a favorite without a photo, its monogram's colour. A new photo reaches the dock as new
    /// properties of the same item; turned off, the favorites have their icon name again.
    func testAFavoritesFaceIsItsImageInTheQuicklistAndANewPhotoIsNewProperties() throws {
        let probe = runCommand(["/usr/bin/python3", "-c", "import gi; gi.require_version('GdkPixbuf', '2.0')"])
        if probe.status != 0 { try Self.missing("gir1.2-gdkpixbuf-2.0 is missing (\(probe.output))") }
        let faces = "[Launcher]\nDesktopFile=\(Self.desktopFileID)\nDynamicItems=quicklist\nFavoriteFaces=yes\n"
        let fixture = try DaemonFixture(extraConfiguration: faces)
        let bus = try PrivateSessionBus(in: fixture.root)
        let dataHome = fixture.root.appendingPathComponent("data").path
        fixture.daemonEnvironment["XDG_DATA_HOME"] = dataHome
        fixture.daemonEnvironment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("runtime").path
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try fixture.write(contact: "personal/ada-lovelace.vcf", Self.adaCard(photo: try Self.solidPNG((255, 0, 255))))
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let busName = waitUntilServed(fixture)
        let shown = try displayedDynamicTitles(fixture)
        XCTAssertEqual(shown.first, "Ada Lovelace", "\(shown)")
        let other = try XCTUnwrap(shown.last)
        XCTAssertNotEqual(other, "Ada Lovelace")

        let menu = try client(["follow", busName, Self.menuPath, "--icons"], bus: bus, fixture: fixture, name: "follow")
        // The monogram's colour, as its face file (the same SVG) fills its circle.
        let folder = dataHome + "/qactd/faces/\(Self.desktopFileID)"
        var monogram: [Int]?
        XCTAssertTrue(waitUntil(timeout: 10) {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            let svg = files.compactMap { try? String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }.first { $0.contains("<text") }
            guard let fill = svg?.range(of: ##"fill="#[0-9a-f]{6}""##, options: .regularExpression).map({ svg![$0].dropFirst(7).prefix(6) }),
                  let value = Int(fill, radix: 16)
            else { return false }
            monogram = [value >> 16, value >> 8 & 0xFF, value & 0xFF, 255]
            return true
        }, "no monogram among the faces in \(folder)")
        func close(_ pixel: [Int]?, _ wanted: [Int]?) -> Bool {
            guard let pixel, let wanted, pixel.count == wanted.count else { return false }
            return zip(pixel, wanted).allSatisfy { abs($0 - $1) <= 8 }
        }
        XCTAssertTrue(waitUntil(timeout: 10) {
            let icons = self.icons(menu)
            return close(Self.pixel(icons["Ada Lovelace"], "centre"), [255, 0, 255, 255]) && close(Self.pixel(icons[other], "top"), monogram)
        }, "icons: \(icons(menu)), the monogram \(String(describing: monogram))\n\(fixture.log())")
        let ada = try XCTUnwrap(icons(menu)["Ada Lovelace"])
        XCTAssertTrue(ada["name"] is NSNull, "the face goes alone, without the icon name a dock would prefer: \(ada)")
        XCTAssertEqual(Self.pixel(ada, "corner")?.last, 0, "cut round: the corner is transparent: \(ada)")
        XCTAssertEqual((ada["image"] as? [String: Any])?["format"] as? String, "png", "a photo's face is its PNG picture: \(ada)")

        // A new photo: the same item, new properties.
        let layouts = fixture.log().components(separatedBy: "Quicklist: LayoutUpdated").count
        let oneItemUpdates = fixture.log().components(separatedBy: "ItemsPropertiesUpdated for 1 item").count
        try fixture.write(contact: "personal/ada-lovelace.vcf", Self.adaCard(photo: try Self.solidPNG((0, 255, 0))))
        XCTAssertTrue(waitUntil(timeout: 10) {
            _ = fixture.qactl(["resign-active"])
            return close(Self.pixel(self.icons(menu)["Ada Lovelace"], "centre"), [0, 255, 0, 255])
        }, "icons: \(icons(menu))\n\(fixture.log())")
        XCTAssertGreaterThan(fixture.log().components(separatedBy: "ItemsPropertiesUpdated for 1 item").count, oneItemUpdates, fixture.log())
        XCTAssertEqual(fixture.log().components(separatedBy: "Quicklist: LayoutUpdated").count, layouts, "no new layout for a new face")

        // FavoriteFaces=no: the favorites have their icon name again, and no image.
        try fixture.writeConfiguration("[Launcher]\nDesktopFile=\(Self.desktopFileID)\nDynamicItems=quicklist\nFavoriteFaces=no\n")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) {
            let icons = self.icons(menu)
            return shown.allSatisfy { icons[$0]?["image"] is NSNull && icons[$0]?["name"] as? String == "starred" }
        }, "icons: \(icons(menu))\n\(fixture.log())")
    }

    func testAReloadTurnsTheQuicklistOnAndOffAndOffLeavesTheBus() throws {
        let fixture = try makeFixture(bus: nil, dynamicItems: "desktop-entry")
        let bus = try PrivateSessionBus(in: fixture.root)
        fixture.daemonEnvironment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(quicklist(fixture)["state"] as? String, "off")
        XCTAssertTrue((quicklist(fixture)["message"] as? String ?? "").contains("DynamicItems=desktop-entry"), "\(quicklist(fixture))")

        try fixture.writeConfiguration("[Launcher]\nDesktopFile=\(Self.desktopFileID)\nDynamicItems=quicklist\n")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        let busName = waitUntilServed(fixture)
        XCTAssertEqual(quicklist(fixture)["items"] as? Int, 2)
        XCTAssertTrue(hasOwner(busName, on: bus))

        try fixture.writeConfiguration("[Launcher]\nDesktopFile=\(Self.desktopFileID)\nDynamicItems=desktop-entry\n")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { self.quicklist(fixture)["state"] as? String == "off" }, "\(quicklist(fixture))")
        XCTAssertTrue(waitUntil(timeout: 10) { !self.hasOwner(busName, on: bus) }, "the daemon left the bus, so docks drop the menu")
    }

    /// Whether `name` is on the bus (org.freedesktop.DBus.NameHasOwner, asked through GLib).
    private func hasOwner(_ name: String, on bus: PrivateSessionBus) -> Bool {
        let script = """
            import sys
            from gi.repository import Gio, GLib
            connection = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            reply = connection.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                         GLib.Variant("(s)", (sys.argv[1],)), None, Gio.DBusCallFlags.NONE, -1, None)
            print(reply.unpack()[0])
            """
        let result = runCommand(["/usr/bin/python3", "-c", script, name], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines) == "True"
    }
}
