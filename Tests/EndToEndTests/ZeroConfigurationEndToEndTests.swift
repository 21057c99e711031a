import Foundation
import TestSupport
import XCTest

/// Nothing to write: the built qactd started with no configuration file at all, on a desktop
/// where a `mimeapps.list` names a mail app (a desktop entry whose `Exec` is a recording script
/// with `%u`) and Evolution Data Server keeps the person's contacts. A contact starred through
/// EDS's own client library shows up without any `qactl resign-active`, and choosing it runs the
/// app's command line with exactly one `mailto:` argument, percent-encoded.
final class ZeroConfigurationEndToEndTests: XCTestCase {
    override func setUpWithError() throws {
        try PrivateEvolutionDataServer.requireInstalled()
    }

    func testWithNoConfigurationTheMailAppOffersAFavoriteStarredInEvolutionAndOpensAMailToIt() throws {
        let fixture = try DaemonFixture(copyDemo: false)
        let eds = try PrivateEvolutionDataServer(in: fixture.root)
        let root = fixture.root.path
        let configHome = try XCTUnwrap(eds.environment["XDG_CONFIG_HOME"])

        // The mail app, installed system-wide (a data folder), and the person's choice of it.
        let recorder = root + "/record-mail"
        let arguments = root + "/mail-arguments"
        try """
            #!/bin/sh
            printf '%s\\0' "$@" > "\(arguments).new" && mv "\(arguments).new" "\(arguments)"
            """.write(toFile: recorder, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: recorder)
        try FileManager.default.createDirectory(atPath: root + "/share/applications", withIntermediateDirectories: true)
        try """
            [Desktop Entry]
            Type=Application
            Name=Recording Mail
            Icon=mail-client
            Exec=\(recorder) --compose %u
            MimeType=x-scheme-handler/mailto;
            """.write(toFile: root + "/share/applications/org.example.Mail.desktop", atomically: true, encoding: .utf8)
        try """
            [Default Applications]
            x-scheme-handler/mailto=org.example.Gone.desktop;org.example.Mail.desktop;
            """.write(toFile: configHome + "/mimeapps.list", atomically: true, encoding: .utf8)

        let runtime = root + "/runtime-user"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: root + "/home", withIntermediateDirectories: true)
        fixture.daemonEnvironment = [
            "HOME": root + "/home", "XDG_CONFIG_HOME": configHome, "XDG_DATA_HOME": eds.dataHome.path,
            "XDG_CACHE_HOME": eds.environment["XDG_CACHE_HOME"] ?? "", "XDG_DATA_DIRS": root + "/share", "XDG_CONFIG_DIRS": root + "/etc-xdg",
            "XDG_RUNTIME_DIR": runtime, "XDG_CURRENT_DESKTOP": "",
        ]
        fixture.socketPathOverride = runtime + "/qactd/qactd.sock"
        try eds.start()
        try fixture.start(configured: false)
        defer { fixture.stop() }

        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertNil(status["configFile"], "no configuration file: \(status)")
        let choices = try XCTUnwrap(status["choices"] as? [String: Any], "\(status)")
        XCTAssertEqual(choices["desktopFile"] as? String, "auto")
        XCTAssertEqual(choices["app"] as? String, "org.example.Mail.desktop")
        XCTAssertEqual(choices["chosenBy"] as? String, "default-application")
        XCTAssertEqual(choices["mimeappsList"] as? String, configHome + "/mimeapps.list")
        XCTAssertEqual(choices["favoriteActionFrom"] as? String, "app-exec")
        XCTAssertEqual(choices["favoriteAction"] as? String, "\(recorder) --compose mailto:{email:uri}")
        XCTAssertEqual(choices["recompute"] as? String, "auto")
        XCTAssertEqual(choices["followingContacts"] as? Bool, true)
        XCTAssertEqual(choices["evolution"] as? String, "all")
        let human = fixture.qactl(["status"])
        XCTAssertTrue(human.stdout.contains("org.example.Mail.desktop (the default for mailto: in [Default Applications] of \(configHome)/mimeapps.list)"), human.stdout)
        XCTAssertTrue(human.stdout.contains("[Launcher] DesktopFile="), "how to change it: \(human.stdout)")

        // Starred through EDS's own client library; no qactl resign-active anywhere.
        let email = "x',attachment='file:///home/u/.ssh/id_ed25519@example.org"
        let ada = eds.add("Ada Lovelace", email: email, star: true)
        XCTAssertFalse(ada.isEmpty)
        let shown = waitUntil(timeout: 2) {
            let items = (try? fixture.qactl(["list", "--json"]).json())?["items"] as? [[String: Any]] ?? []
            return items.contains { (($0["item"] as? [String: Any])?["userInfo"] as? [String: Any])?["contactIdentifier"] as? String == ada }
        }
        XCTAssertTrue(shown, "the favorite is on the app's icon within 2 s: \(fixture.qactl(["list", "--all"]).stdout)\n\(fixture.log())")
        let after = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual(after["appConnected"] as? Bool, false, "no app spoke the socket")
        XCTAssertTrue(
            waitUntil(timeout: 10) {
                (try? String(contentsOfFile: eds.dataHome.path + "/qactd/exports/share/applications/org.example.Mail.desktop", encoding: .utf8))?.contains("Name=Ada Lovelace") ?? false
            }, "the mail app's exported entry offers her")

        let trigger = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", ada])
        XCTAssertEqual(trigger.status, 0, trigger.stdout + trigger.stderr)
        XCTAssertTrue(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: arguments) }, "the app's command did not run\n\(fixture.log())")
        let recorded = try String(contentsOfFile: arguments, encoding: .utf8).split(separator: "\0", omittingEmptySubsequences: false).dropLast()
        XCTAssertEqual(
            Array(recorded), ["--compose", "mailto:x%27%2Cattachment%3D%27file%3A%2F%2F%2Fhome%2Fu%2F.ssh%2Fid_ed25519@example.org"],
            "the app's own command line, with one mailto: argument, every field percent-encoded")

        // The person picks another mail app, which is not installed yet: GNOME Settings rewrites
        // mimeapps.list through a temporary file and a rename. Nothing to follow until it is.
        let exports = eds.dataHome.path + "/qactd/exports/share/applications"
        let personal = eds.dataHome.path + "/applications"
        try FileManager.default.createDirectory(atPath: personal, withIntermediateDirectories: true)
        let ownEntry = "[Desktop Entry]\nType=Application\nName=Mine\nExec=/bin/true\n"
        try ownEntry.write(toFile: personal + "/org.example.Mine.desktop", atomically: true, encoding: .utf8)
        func replace(_ path: String, with text: String) throws {
            try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
            XCTAssertEqual(rename(path + ".tmp", path), 0, path)
        }
        func app() -> String? {
            ((try? fixture.qactl(["status", "--json"]).json())?["choices"] as? [String: Any])?["app"] as? String
        }
        func offersAda(_ id: String) -> Bool {
            (try? String(contentsOfFile: exports + "/" + id, encoding: .utf8))?.contains("Name=Ada Lovelace") ?? false
        }
        try replace(configHome + "/mimeapps.list", with: "[Default Applications]\nx-scheme-handler/mailto=org.example.Geary.desktop;org.example.Mail.desktop;\n")
        XCTAssertEqual(app(), "org.example.Mail.desktop", "Geary is not installed: the mail app stays")

        // Geary is installed (its entry renamed into place, as dpkg does): within 2 s the
        // favorites move to its icon, the old app's copy goes, the person's own entry stays.
        let geary = root + "/share/applications/org.example.Geary.desktop"
        try replace(geary, with: "[Desktop Entry]\nType=Application\nName=Geary\nIcon=org.gnome.Geary\nExec=\(recorder) --geary %U\nMimeType=x-scheme-handler/mailto;\n")
        XCTAssertTrue(
            waitUntil(timeout: 2) { offersAda("org.example.Geary.desktop") && !FileManager.default.fileExists(atPath: exports + "/org.example.Mail.desktop") },
            "the favorites did not move to the new default's icon within 2 s: \(String(describing: try? FileManager.default.contentsOfDirectory(atPath: exports)))\n\(fixture.log())")
        XCTAssertEqual(app(), "org.example.Geary.desktop")
        let moved = fixture.qactl(["status"])
        XCTAssertTrue(moved.stdout.contains("org.example.Geary.desktop (the default for mailto: in [Default Applications] of \(configHome)/mimeapps.list)"), moved.stdout)
        XCTAssertEqual(try String(contentsOfFile: personal + "/org.example.Mine.desktop", encoding: .utf8), ownEntry, "the person's own entry is theirs")
        let chosen = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", ada])
        XCTAssertEqual(chosen.status, 0, chosen.stdout + chosen.stderr)
        XCTAssertTrue(
            waitUntil(timeout: 10) { ((try? String(contentsOfFile: arguments, encoding: .utf8)) ?? "").hasPrefix("--geary\0") },
            "a favorite opens the mail in the new default app")

        // Geary is removed again: back to the next app the person listed.
        XCTAssertEqual(unlink(geary), 0)
        XCTAssertTrue(
            waitUntil(timeout: 2) { offersAda("org.example.Mail.desktop") && !FileManager.default.fileExists(atPath: exports + "/org.example.Geary.desktop") },
            "the favorites did not move back within 2 s of the app's removal\n\(fixture.log())")
        XCTAssertEqual(app(), "org.example.Mail.desktop")
        XCTAssertEqual(try String(contentsOfFile: personal + "/org.example.Mine.desktop", encoding: .utf8), ownEntry)
    }
}
