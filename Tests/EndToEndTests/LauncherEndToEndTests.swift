import Foundation
import TestSupport
import XCTest

/// The desktop-entry export read by a real client: GLib's `GDesktopAppInfo` (through Debian's
/// `python3-gi`) lists the quick actions qactd exported and launches them, which runs the
/// exported `qactl trigger` against the built daemon, cold (no app: the LaunchCommand runs and
/// the item waits for the app) and warm (the connected app is handed the action).
final class LauncherEndToEndTests: XCTestCase {
    /// Debian's system Python has `gi`; a `python3` earlier on PATH may not.
    static let python = "/usr/bin/python3"

    static let glibClient = #"""
        import json, sys
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio
        info = Gio.DesktopAppInfo.new_from_filename(sys.argv[1])
        if info is None:
            sys.exit("GDesktopAppInfo refused " + sys.argv[1])
        actions = info.list_actions()
        print(json.dumps({"actions": actions, "names": [info.get_action_name(a) for a in actions]}))
        if len(sys.argv) > 2:
            info.launch_action(sys.argv[2], None)
        """#

    /// A dynamic item's contact, as the JSON of `List` and `qactl app` carry it.
    static func contactIdentifier(_ item: Any?) -> String? {
        ((item as? [String: Any])?["userInfo"] as? [String: Any])?["contactIdentifier"] as? String
    }

    private func requireGLib() throws {
        let probe = DaemonFixture.run(Self.python, ["-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"])
        guard probe.status != 0 else { return }
        throw unavailable("\(Self.python) cannot import gi's Gio (apt-get install python3-gi gir1.2-glib-2.0): \(probe.stderr)")
    }

    /// A private session bus for the GLib client: with one, GLib sends a D-Bus activatable app
    /// its actions over D-Bus instead of running their Exec, as on a desktop.
    static let sessionBus = "/usr/bin/dbus-run-session"

    private func requireSessionBus() throws {
        guard !FileManager.default.isExecutableFile(atPath: Self.sessionBus) else { return }
        throw unavailable("\(Self.sessionBus) is missing (apt-get install dbus-daemon)")
    }

    /// Runs the GLib client on a session bus of its own, with an environment that names no
    /// socket: the exported command must reach the daemon through the socket it names itself.
    private func glib(_ fixture: DaemonFixture, _ arguments: [String]) throws -> (actions: [String], names: [String]) {
        var environment = fixture.environment
        environment["QACTD_SOCKET"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("elsewhere").path
        let result = DaemonFixture.run(Self.sessionBus, ["--", Self.python, "-c", Self.glibClient] + arguments, environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        // The launched qactl shares the client's stdout and may print after the first line.
        let firstLine = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let object = try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any]
        return (object?["actions"] as? [String] ?? [], object?["names"] as? [String] ?? [])
    }

    /// A daemon that follows the contacts (the default) with no saved state: its very first
    /// export of the app's entry already holds the favorites, written once. A shell that reads
    /// the entry at login would otherwise keep an entry without them.
    func testTheFirstExportAlreadyHoldsTheFavorites() throws {
        let fixture = try DaemonFixture()
        try fixture.writeConfiguration("""
            [Launcher]
            DesktopFile=io.qactd.Test.desktop
            [Shortcuts]
            Recompute=auto
            DisplayLimit=20
            """)
        let exported = try fixture.installAppEntry("[Desktop Entry]\nType=Application\nName=Test Contacts\nExec=/bin/true\n")
        try fixture.start()
        XCTAssertTrue(
            waitUntil(timeout: 10) { ((try? String(contentsOfFile: exported, encoding: .utf8)) ?? "").contains("Name=Ada Lovelace") },
            "the favorites reach the entry\n\(fixture.log())")
        let writes = fixture.log().components(separatedBy: "\n").filter { $0.contains("Exported the quick actions to '\(exported)'") }
        XCTAssertEqual(writes.count, 1, "the first export was written without the favorites, then again:\n\(fixture.log())")
    }

    func testGDesktopAppInfoListsTheQuickActionsAndLaunchingOneTriggersItColdAndWarm() throws {
        try requireGLib()
        try requireSessionBus()
        let fixture = try DaemonFixture()
        let launched = fixture.root.appendingPathComponent("launched")
        try fixture.writeConfiguration("""
            [Launcher]
            DesktopFile=io.qactd.Test.desktop
            [Shortcuts]
            DisplayLimit=20
            [App]
            LaunchCommand=/bin/sh -c 'echo "$QACTD_SHORTCUT_TYPE" >> \(launched.path)'
            """)
        // A favorite whose name and identifier try to break out of the desktop entry and of Exec.
        let hostile = try JSONSerialization.data(withJSONObject: [
            "identifier": "--evil \"id\" $HOME %u;=\\ `x` 👩‍💻", "name": "Eve\n[Desktop Entry]\nExec=/bin/touch \(fixture.root.path)/pwned %u",
            "favorite": true,
        ])
        try fixture.write(contact: "work/eve.json", String(decoding: hostile, as: UTF8.self))
        // D-Bus activatable, as GNOME's own apps are: on a session bus GLib would send the actions
        // to the app over D-Bus (nobody answers here), which the copy turns off so their Exec runs.
        let exported = try fixture.installAppEntry(
            "[Desktop Entry]\nType=Application\nName=Test Contacts\nExec=/bin/true\nIcon=x-office-address-book\nDBusActivatable=true\n")
        try fixture.start()

        let status = try fixture.qactl(["status", "--json"]).json()
        let export = try XCTUnwrap(status["desktopEntry"] as? [String: Any], "status shows the export")
        XCTAssertEqual(export["path"] as? String, exported)
        XCTAssertNotNil(export["written"] as? String)
        XCTAssertNil(export["problem"] as? String)
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("desktop entry  \(exported), written "), fixture.qactl(["status"]).stdout)

        // Before the first launch: the static items only, with their titles.
        var seen = try glib(fixture, [exported])
        XCTAssertEqual(seen.actions, ["qactd-SearchAction", "qactd-ShareAction"])
        XCTAssertEqual(seen.names, ["Search", "Share"])

        // Cold: no app is connected, so the item becomes the pending launch item and the
        // LaunchCommand runs.
        _ = try glib(fixture, [exported, "qactd-SearchAction"])
        XCTAssertTrue(waitUntil(timeout: 10) {
            ((try? String(contentsOf: launched, encoding: .utf8)) ?? "").contains("SearchAction")
        }, "the LaunchCommand ran for the launched action; daemon log:\n\(fixture.log())")
        let pending = try fixture.qactl(["status", "--json"]).json()["pendingLaunchItem"] as? [String: Any]
        XCTAssertEqual(pending?["type"] as? String, "SearchAction")

        // The app connects (taking the pending item) and resigns active: the favorites join the entry.
        let app = try BackgroundProcess(
            DaemonFixture.qactl, ["app", "--json"], environment: fixture.environment,
            outputFile: fixture.root.appendingPathComponent("app.out"))
        XCTAssertTrue(waitUntil(timeout: 10) { app.jsonLines.first?["event"] as? String == "connected" }, app.output)
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let displayed = try fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]] ?? []
        let titles = displayed.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
        let favorites = try fixture.qactl(["status", "--json"]).json()["favorites"] as? Int ?? 0
        XCTAssertGreaterThan(favorites, 2)
        XCTAssertEqual(titles.count, 2 + favorites, "every favorite fits the display limit")
        XCTAssertTrue(waitUntil(timeout: 10) { ((try? self.glib(fixture, [exported]))?.names ?? []) == titles },
                      "the entry follows the list exactly, in List order: \(titles)")
        seen = try glib(fixture, [exported])
        XCTAssertEqual(seen.actions.count, titles.count, "no action injected by a name")
        XCTAssertTrue(displayed.contains { Self.contactIdentifier($0["item"]) == "--evil \"id\" $HOME %u;=\\ `x` 👩‍💻" }, "the hostile favorite is displayed")
        if ProcessInfo.processInfo.environment["QACTD_KEEP_EXPORT"] != nil { try? FileManager.default.copyItem(atPath: exported, toPath: "/tmp/ld/exported.desktop") }

        // Warm: the connected app is handed exactly the favorite chosen, the hostile one included.
        for (offset, row) in displayed.enumerated().dropFirst(2) {
            let identifier = Self.contactIdentifier(row["item"])
            _ = try glib(fixture, [exported, seen.actions[offset]])
            XCTAssertTrue(waitUntil(timeout: 10) {
                app.jsonLines.last { $0["event"] as? String == "action" }.map { Self.contactIdentifier($0["item"]) == identifier } == true
            }, "the app received the favorite \(identifier ?? "?"): \(app.output)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.root.appendingPathComponent("pwned").path), "no name ran a command")

        // The exported file passes desktop-file-validate when the tool is there (the unit tests require it).
        let validation = runCommand(["desktop-file-validate", exported])
        if validation.status != 127 { XCTAssertEqual(validation.status, 0, validation.output) }
    }
}
