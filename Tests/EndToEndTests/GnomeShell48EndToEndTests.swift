import Foundation
import TestSupport
import XCTest

/// Today's GNOME: Debian 13's GNOME Shell 48 with Dash to Dock 100, in a Debian 13 root the test
/// makes itself (Tests/integration/debian-root.sh: debootstrap from Debian's archive, the packages
/// of Tests/integration/trixie-packages.txt, kept in .build/trixie-root and made anew when that
/// list changes). Tests/integration/gnome-shell.py runs the shell there headless (in a private
/// mount namespace, chrooted) and everything else here, the built qactd included: the extension,
/// installed as `make install` installs it, is active as the shell reports it; the dash's and the
/// app grid's menus, and Dash to Dock's, follow the favorites live; an app's own items show in
/// the dash's menu and a click on one reaches the running app.
final class GnomeShell48EndToEndTests: XCTestCase {
    static let root = Debian13Root.path

    func testOnDebian13ARunningAppStaysAttachedThroughTheFirstExportASwitchOfMailAppAndQactdsRemoval() throws {
        guard try Debian13Root.make() else { return }
        let (report, status) = try Debian13Root.runDesktopScript(GnomeShellEndToEndTests.script, ["--attach-only"], desktop: "GNOME Shell 48")
        XCTAssertTrue((report["shellVersion"] as? String ?? "").hasPrefix("48."), "\(report)")
        GnomeShellEndToEndTests.assertAttached(report, status: status)
    }

    func testOnDebian13TheExtensionIsActiveAndLiveAndSoIsDashToDock() throws {
        guard try Debian13Root.make() else { return }
        let (report, status) = try Debian13Root.runDesktopScript(GnomeShellEndToEndTests.script, ["--live-only"], desktop: "GNOME Shell 48")
        XCTAssertEqual(status, 0, "\(report)")
        XCTAssertTrue((report["shellVersion"] as? String ?? "").hasPrefix("48."), "\(report)")
        // ExtensionState.ACTIVE from org.gnome.Shell.Extensions.GetExtensionInfo: not OUT OF DATE,
        // and the ES module loaded.
        XCTAssertEqual(report["extensionState"] as? Int, 1, "\(report)")
        GnomeShellEndToEndTests.assertStatusSaysTheShellsState(report)

        try GnomeShellEndToEndTests.assertLiveMenus(report)
        // An app's own items: the example app's three recent files show in the dash's menu (the
        // extension's section) beside the favorites, each once, and a click on one reaches the
        // running app, which opens that file and no other.
        let appItems = try XCTUnwrap(report["appItems"] as? [String: Any], "\(report)")
        let titles = appItems["titles"] as? [String] ?? []
        let expected = appItems["expected"] as? [String] ?? []
        let dash = appItems["dash"] as? [String] ?? []
        XCTAssertEqual(titles, ["Open Notes", "Open Agenda", "Open Letter"], "\(appItems)")
        XCTAssertEqual(expected.filter(titles.contains), titles, "the app's items are displayed, in its order: \(appItems)")
        XCTAssertEqual(dash, expected, "\(appItems)")
        for title in titles { XCTAssertEqual(dash.filter { $0 == title }.count, 1, "'\(title)' once: \(appItems)") }
        XCTAssertEqual(appItems["clicked"] as? Bool, true, "\(appItems)")
        let opened = appItems["opened"] as? [String] ?? []
        XCTAssertEqual(opened.count, 1, "\(appItems)")
        XCTAssertTrue(opened.first?.hasSuffix("/Agenda") == true, "\(appItems)")
        let live = (report["steps"] as? [[String: Any]] ?? []).filter { $0["grid"] != nil }
        let dock = report["dock"] as? [[String: Any]] ?? []
        print("GNOME Shell \(report["shellVersion"] ?? "?") in the Debian 13 root: shell started in \(report["shellStartSeconds"] ?? "?") s; live \(live.map { "\($0["step"] ?? ""): \($0["seconds"] ?? "") s" }); dock \(dock.map { "\($0["step"] ?? ""): \($0["seconds"] ?? "") s" })")
    }
}

/// The Debian 13 root the desktop and package tests run in, made (or reused) by
/// Tests/integration/debian-root.sh from Debian's archive.
enum Debian13Root {
    static let path = DaemonFixture.repository.appendingPathComponent(".build/trixie-root").path

    /// Makes the root or finds it made; false (the failure recorded) when it cannot be made, and
    /// a skip (a failure under `CI=true`) where it cannot be made here at all.
    static func make() throws -> Bool {
        let made = DaemonFixture.run(DaemonFixture.repository.appendingPathComponent("Tests/integration/debian-root.sh").path, [
            "trixie", DaemonFixture.repository.appendingPathComponent("Tests/integration/trixie-packages.txt").path, path,
        ])
        if made.status == 77 { throw unavailable("the Debian 13 root: \(made.stderr)") }
        XCTAssertEqual(made.status, 0, made.stderr)
        return made.status == 0
    }

    /// Runs a desktop's test script (`gnome-shell.py`, `plasma.py`) with the root, the built
    /// binaries and `arguments`, and returns its JSON report and exit status; a skip (a failure
    /// under `CI=true`) when the script says the desktop cannot start here (77).
    static func runDesktopScript(_ script: String, _ arguments: [String], desktop: String) throws -> (report: [String: Any], status: Int32) {
        let result = DaemonFixture.run("/usr/bin/python3", [script, "--bin", DaemonFixture.binDirectory.path, "--root", path] + arguments)
        let report = try XCTUnwrap(
            (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any], result.stdout + result.stderr)
        if result.status == 77 { throw unavailable("\(desktop) in \(path): \(report["error"] ?? result.stdout)") }
        return (report, result.status)
    }
}
