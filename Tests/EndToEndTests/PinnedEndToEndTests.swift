import Foundation
import TestSupport
import XCTest

/// A pinned quick action with the built daemon and qactl, as a person meets it: the launcher
/// read and launched by GLib's `GDesktopAppInfo` (Debian's `python3-gi`), checked by
/// `desktop-file-validate`, and a disabled one shown by the real dunst on a private bus.
extension NotificationEndToEndTests {
    static let pinnedClient = #"""
        import json, sys
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio
        info = Gio.DesktopAppInfo.new_from_filename(sys.argv[1])
        if info is None:
            sys.exit("GDesktopAppInfo refused " + sys.argv[1])
        print(json.dumps({"name": info.get_name(), "actions": info.list_actions(), "exec": info.get_commandline()}), flush=True)
        if len(sys.argv) > 2:
            info.launch([], None)
        """#

    /// Reads (and with `launch`, launches) the pinned launcher through GLib, from an environment
    /// that names no socket: the launcher's command must name the daemon's itself.
    private func glib(_ path: String, launch: Bool = false) throws -> [String: Any] {
        var environment = fixture.environment
        environment["QACTD_SOCKET"] = nil
        environment["DBUS_SESSION_BUS_ADDRESS"] = nil
        environment["XDG_RUNTIME_DIR"] = fixture.root.appendingPathComponent("elsewhere").path
        let result = DaemonFixture.run(
            LauncherEndToEndTests.sessionBus, ["--", LauncherEndToEndTests.python, "-c", Self.pinnedClient, path] + (launch ? ["launch"] : []),
            environment: environment)
        XCTAssertEqual(result.status, 0, result.stderr)
        let firstLine = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        return try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any] ?? [:]
    }

    private func pins() throws -> [[String: Any]] {
        try fixture.qactl(["pins", "--json"]).json()["pins"] as? [[String: Any]] ?? []
    }

    private func launcherKey(_ path: String, _ key: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n").first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    private func usage() throws -> Int {
        (try fixture.qactl(["status", "--json"]).json()["usage"] as? [String: Any])?["FavoriteAction/ada-lovelace"] as? Int ?? 0
    }

    func testAPinnedFavoriteFollowsItsContactNotifiesWhileDisabledAndOutlivesARestart() throws {
        let probe = DaemonFixture.run(LauncherEndToEndTests.python, ["-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"])
        if probe.status != 0 { try QuicklistEndToEndTests.missing("\(LauncherEndToEndTests.python) cannot import gi's Gio (apt-get install python3-gi gir1.2-glib-2.0)") }
        try start("")
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let ada = fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf")
        let card = try String(contentsOf: ada, encoding: .utf8)

        // Pinned by its position in `qactl list`.
        let listed = try fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]] ?? []
        let position = try XCTUnwrap(listed.first { LauncherEndToEndTests.contactIdentifier($0["item"]) == "ada-lovelace" }?["position"] as? Int)
        let pinned = fixture.qactl(["pin", String(position), "--json"])
        XCTAssertEqual(pinned.status, 0, pinned.stdout + pinned.stderr)
        let pin = try XCTUnwrap(try pinned.json()["pin"] as? [String: Any])
        XCTAssertEqual(pin["identifier"] as? String, "FavoriteAction-ada-lovelace")
        let path = try XCTUnwrap(pin["desktopFile"] as? String)
        XCTAssertEqual(path, fixture.root.appendingPathComponent("data/qactd/exports/share/applications/io.qactd.Test.pinned.FavoriteAction-ada-lovelace.desktop").path)
        XCTAssertTrue(waitUntil(timeout: 10) { self.launcherKey(path, "Name") == "Ada Lovelace" }, "the launcher is written; log:\n\(fixture.log().suffix(2000))")
        XCTAssertEqual(try glib(path)["name"] as? String, "Ada Lovelace")
        try assertDesktopFileValid(path)
        XCTAssertTrue(fixture.qactl(["pins"]).stdout.contains("FavoriteAction-ada-lovelace"))

        // Renamed: the launcher is renamed, and launching it triggers the contact's item.
        try card.replacingOccurrences(of: "FN:Ada Lovelace", with: "FN:Ada King").write(to: ada, atomically: true, encoding: .utf8)
        XCTAssertTrue(waitUntil(timeout: 10) { (try? self.glib(path))?["name"] as? String == "Ada King" }, "GLib reads the new name")
        _ = try glib(path, launch: true)
        XCTAssertTrue(waitUntil(timeout: 10) {
            let pending = (try? self.fixture.qactl(["status", "--json"]).json())?["pendingLaunchItem"] as? [String: Any]
            return LauncherEndToEndTests.contactIdentifier(pending) == "ada-lovelace" && pending?["title"] as? String == "Ada King"
        }, "launching the pin triggered Ada's item; log:\n\(fixture.log().suffix(2000))")
        let counted = try usage()
        XCTAssertEqual(counted, 1)

        // Removed: the launcher stays, disabled; launching it shows why and triggers nothing.
        try FileManager.default.removeItem(at: ada)
        XCTAssertTrue(waitUntil(timeout: 10) { (try? self.pins())?.first?["state"] as? String == "disabled" })
        XCTAssertTrue(waitUntil(timeout: 10) { self.launcherKey(path, "X-Qactd-Pin-State") == "disabled" })
        XCTAssertEqual(try glib(path)["name"] as? String, "Ada King", "still in place, with the name it had")
        try assertDesktopFileValid(path)
        _ = try glib(path, launch: true)
        try assertOneNotification(chosen: "Ada King", saying: ["no longer in your contacts"])
        XCTAssertEqual(try usage(), counted, "nothing was triggered")
        let direct = fixture.qactl(["trigger", "--pinned", "FavoriteAction-ada-lovelace", "--json"])
        XCTAssertEqual(direct.status, 1)
        XCTAssertTrue(direct.stdout.contains("PinDisabled"), direct.stdout)

        // Back: enabled again.
        try card.write(to: ada, atomically: true, encoding: .utf8)
        XCTAssertTrue(waitUntil(timeout: 10) { self.launcherKey(path, "X-Qactd-Pin-State") == "enabled" && self.launcherKey(path, "Name") == "Ada Lovelace" })
        XCTAssertEqual(try pins().first?["state"] as? String, "enabled")

        // A restart keeps the pin and its launcher.
        _ = fixture.stop()
        try fixture.start()
        XCTAssertEqual(try pins().map { $0["identifier"] as? String }, ["FavoriteAction-ada-lovelace"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        XCTAssertEqual(launcherKey(path, "X-Qactd-Pin-State"), "enabled")

        // Unpinned: the launcher goes.
        let unpinned = fixture.qactl(["unpin", "1"])
        XCTAssertEqual(unpinned.status, 0, unpinned.stdout + unpinned.stderr)
        XCTAssertTrue(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: path) })
        XCTAssertEqual(try pins().count, 0)

        // Pinned again, then the app's configuration removed (DesktopFile= emptied, reloaded): gone.
        XCTAssertEqual(fixture.qactl(["pin", "--type", "FavoriteAction", "--contact", "ada-lovelace"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: path) })
        try fixture.writeConfiguration("")
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: path) }, "no launcher outlives its app's configuration")
        XCTAssertEqual(try pins().count, 0)
        let refused = fixture.qactl(["pin", "1", "--json"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stdout.contains("PinningUnavailable"), refused.stdout)
    }
}
