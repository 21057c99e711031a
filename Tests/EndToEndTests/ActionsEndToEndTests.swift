import Foundation
import TestSupport
import XCTest

/// `[Actions]` commands end to end: the built qactd runs a recorder program (a Python script
/// that writes its argv and the item's environment as one JSON line) for items triggered with
/// the built qactl and through the exported desktop entry's actions as GLib launches them.
/// Every contact value that could be code or an option reaches the recorder as exactly the
/// argument the template placed it in, unchanged, or the trigger is refused and nothing runs.
final class ActionsEndToEndTests: XCTestCase {
    static let python = "/usr/bin/python3"
    static let recorderScript = #"""
        import json, os, sys
        with open(sys.argv[1], "a") as out:
            env = {k: v for k, v in os.environ.items() if k.startswith("QACTD_")}
            out.write(json.dumps({"argv": sys.argv[2:], "env": env}) + "\n")
        """#

    /// The values of the issue: shell syntax, quotes, a newline, field codes of the Desktop
    /// Entry specification and of the template itself, a long text. (A NUL, a leading dash and
    /// 1 MiB, longer than Linux lets one argument be, are refused: see below.)
    static let hostileValues: [String] = [
        "$(touch /tmp/qactd-pwned)", "`touch /tmp/qactd-pwned`", "a; touch /tmp/qactd-pwned", "a | tee /tmp/qactd-pwned",
        "\"double\" 'single' \\back", "line one\nline two", "%u %f %% %c", "{email}", "{{name}}",
        String(repeating: "x", count: 100_000), "middle -x --output=/tmp/x",
    ]

    struct Recorded: Equatable {
        var argv: [String]
        var environment: [String: String]
    }

    private var recorder = ""
    private var recorded = ""

    private func makeFixture(extra: String = "") throws -> DaemonFixture {
        let fixture = try DaemonFixture()
        recorder = fixture.root.appendingPathComponent("recorder.py").path
        recorded = fixture.root.appendingPathComponent("recorded.jsonl").path
        try Self.recorderScript.write(toFile: recorder, atomically: true, encoding: .utf8)
        try fixture.writeConfiguration("""
            [Contacts]
            MaxFileBytes=8388608
            [Shortcuts]
            DisplayLimit=40
            MaxDynamicItems=40
            [Actions]
            FavoriteAction=\(Self.python) \(recorder) \(recorded) {name} to={email} --id={identifier} {subtitle} "{title}" {file}
            SearchAction=\(Self.python) \(recorder) \(recorded) search {name} "{type}"
            \(extra)
            """)
        return fixture
    }

    private func readRecorded() -> [Recorded] {
        let text = (try? String(contentsOfFile: recorded, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
            return Recorded(argv: object["argv"] as? [String] ?? [], environment: object["env"] as? [String: String] ?? [:])
        }
    }

    private func writeHostileContacts(_ fixture: DaemonFixture, _ values: [String]) throws {
        for (offset, value) in values.enumerated() {
            let json = try JSONSerialization.data(withJSONObject: [
                "identifier": "h\(offset)", "name": value, "email": value, "favorite": true,
            ])
            try json.write(to: fixture.contacts.appendingPathComponent("hostile/h\(offset).json"))
        }
    }

    func testAnItemWithACommandRunsItWithEachValueAsExactlyOneArgument() throws {
        let fixture = try makeFixture()
        try FileManager.default.createDirectory(at: fixture.contacts.appendingPathComponent("hostile"), withIntermediateDirectories: true)
        try writeHostileContacts(fixture, Self.hostileValues)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)

        // A static item with a command: no app, no pending item, no LaunchCommand.
        let search = fixture.qactl(["trigger", "--type", "SearchAction", "--json"])
        XCTAssertEqual(search.status, 0, search.stderr)
        let searchReply = try search.json()
        XCTAssertEqual(searchReply["delivery"] as? String, "command")
        XCTAssertNotNil(searchReply["commandPID"] as? Int)
        XCTAssertTrue(waitUntil(timeout: 10) { self.readRecorded().count == 1 }, fixture.log())
        XCTAssertEqual(readRecorded().first?.argv, ["search", "SearchAction"], "the empty {name} argument is dropped")
        XCTAssertNil(try fixture.qactl(["status", "--json"]).json()["pendingLaunchItem"] as? [String: Any])
        let plain = fixture.qactl(["trigger", "--type", "SearchAction"])
        XCTAssertTrue(plain.stdout.contains("delivery  by its command: started '\(Self.python)' (pid "), plain.stdout)
        XCTAssertTrue(waitUntil(timeout: 10) { self.readRecorded().count == 2 })

        // A favorite from a vCard: {file} is its own file.
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { self.readRecorded().count == 3 })
        let adaFile = fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf").path
        XCTAssertEqual(
            readRecorded().last?.argv,
            ["Ada Lovelace", "to=ada@analytical.example", "--id=ada-lovelace", "ada@analytical.example", "Ada Lovelace", adaFile])
        XCTAssertEqual(readRecorded().last?.environment["QACTD_CONTACT_FILE"], adaFile)
        XCTAssertEqual(readRecorded().last?.environment["QACTD_CONTACT_NAME"], "Ada Lovelace")
        XCTAssertEqual(readRecorded().last?.environment["QACTD_CONTACT_EMAIL"], "ada@analytical.example")
        XCTAssertEqual(readRecorded().last?.environment["QACTD_SHORTCUT_TITLE"], "Ada Lovelace")

        let rows = try fixture.qactl(["list", "--all", "--json"]).json()["items"] as? [[String: Any]] ?? []
        for offset in Self.hostileValues.indices {
            // The value as the index holds it: a name's line breaks are folded to spaces on reading.
            let contact = try fixture.qactl(["contact", "h\(offset)", "--json"]).json()["contact"] as? [String: Any]
            let value = contact?["name"] as? String ?? ""
            XCTAssertEqual(value, Self.hostileValues[offset].replacingOccurrences(of: "\n", with: " "))
            XCTAssertEqual(contact?["email"] as? String, Self.hostileValues[offset])
            let email = contact?["email"] as? String ?? ""
            let item = rows.first { LauncherEndToEndTests.contactIdentifier($0["item"]) == "h\(offset)" }?["item"] as? [String: Any]
            XCTAssertEqual(item?["subtitle"] as? String, email)
            let before = readRecorded().count
            let result = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "h\(offset)", "--json"])
            XCTAssertEqual(result.status, 0, "h\(offset): \(result.stderr.prefix(500))")
            XCTAssertTrue(waitUntil(timeout: 10) { self.readRecorded().count == before + 1 }, "h\(offset) ran once")
            guard let last = readRecorded().last else { continue }
            XCTAssertEqual(last.argv.count, 6, "h\(offset): one argument per field")
            XCTAssertEqual(
                Array(last.argv.prefix(5)), [value, "to=" + email, "--id=h\(offset)", email, value],
                "h\(offset): {name}, {email}, {identifier}, {subtitle} and {title} unchanged")
            // A JSON contact's card is a private copy, readable, holding the contact.
            let copy = last.argv.last ?? ""
            XCTAssertTrue(copy.hasPrefix(fixture.root.appendingPathComponent("run/cards/").path), copy)
            let card = (try? String(contentsOfFile: copy, encoding: .utf8)) ?? ""
            XCTAssertTrue(card.hasPrefix("BEGIN:VCARD\r\n") && card.contains("UID:h\(offset)\r\n"), String(card.prefix(200)))
            XCTAssertEqual(last.environment["QACTD_CONTACT_NAME"], value)
            XCTAssertEqual(last.environment["QACTD_CONTACT_FILE"], copy)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/qactd-pwned"), "no value ran as code")
        XCTAssertTrue(fixture.log().contains("exited with status 0"), "the command's end is logged")
    }

    /// A value that would begin an argument with "-" (an option) or holds a NUL: refused, and
    /// nothing runs, through qactl and through the desktop entry alike.
    func testAValueThatWouldBeAnOptionOrHoldsANulIsRefusedAndNothingRuns() throws {
        let fixture = try makeFixture()
        // A path of this test's own: whatever else left a /tmp/x proves nothing either way.
        let output = "/tmp/qactd-refused-\(UUID().uuidString)"
        let refused = ["-rf", "--output=" + output, "-", "a\u{0}b", String(repeating: "x", count: 1 << 20)]
        try FileManager.default.createDirectory(at: fixture.contacts.appendingPathComponent("hostile"), withIntermediateDirectories: true)
        try writeHostileContacts(fixture, refused)
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        for offset in refused.indices {
            let result = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "h\(offset)", "--json"])
            XCTAssertEqual(result.status, 1, "h\(offset): \(result.stdout)")
            XCTAssertTrue(result.stdout.contains("io.qactd.QuickActions.CommandRefused"), result.stdout)
            let sentence = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "h\(offset)"])
            XCTAssertTrue(sentence.stderr.contains("was not run"), sentence.stderr)
        }
        // A trigger that runs afterwards proves the refused ones had their chance to write.
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "SearchAction"]).status, 0)
        XCTAssertTrue(waitUntil(timeout: 10) { !self.readRecorded().isEmpty })
        XCTAssertEqual(readRecorded().map(\.argv), [["search", "SearchAction"]], "no refused item ran")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }

    /// The same values reach the recorder through the exported desktop entry, launched by GLib
    /// (`GDesktopAppInfo.launch_action`, as GNOME Shell does): its Exec runs `qactl trigger`.
    func testTheDesktopEntrysActionsRunTheCommandWithTheSameValues() throws {
        let probe = DaemonFixture.run(Self.python, ["-c", "import gi; gi.require_version('Gio', '2.0'); from gi.repository import Gio"])
        if probe.status != 0 {
            throw unavailable("\(Self.python) cannot import gi's Gio (apt-get install python3-gi gir1.2-glib-2.0): \(probe.stderr)")
        }
        let values = Self.hostileValues.filter { $0.utf8.count < 4096 } + ["-rf"]
        let fixture = try makeFixture(extra: "[Launcher]\nDesktopFile=io.qactd.Test.desktop")
        try FileManager.default.createDirectory(at: fixture.contacts.appendingPathComponent("hostile"), withIntermediateDirectories: true)
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal"))
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("work"))
        try writeHostileContacts(fixture, values)
        let exported = try fixture.installAppEntry("[Desktop Entry]\nType=Application\nName=Test Contacts\nExec=/bin/true\nIcon=x-office-address-book\n")
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let rows = try fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]] ?? []
        XCTAssertEqual(rows.count, 2 + values.count)
        var environment = fixture.environment
        environment["QACTD_SOCKET"] = nil
        let launch = #"""
            import sys, gi
            gi.require_version("Gio", "2.0")
            from gi.repository import Gio
            info = Gio.DesktopAppInfo.new_from_filename(sys.argv[1])
            actions = info.list_actions()
            print("\n".join(actions))
            for action in sys.argv[2:]:
                info.launch_action(actions[int(action)], None)
            """#
        XCTAssertTrue(waitUntil(timeout: 10) {
            DaemonFixture.run(Self.python, ["-c", launch, exported], environment: environment).stdout.split(separator: "\n").count == rows.count
        }, "the export lists every item")
        for (offset, row) in rows.enumerated() {
            guard let item = row["item"] as? [String: Any], item["type"] as? String == "FavoriteAction",
                  let identifier = LauncherEndToEndTests.contactIdentifier(item),
                  let index = Int(identifier.dropFirst()) else { continue }
            let value = values[index]
            let before = readRecorded().count
            let result = DaemonFixture.run(Self.python, ["-c", launch, exported, String(offset)], environment: environment)
            XCTAssertEqual(result.status, 0, result.stderr)
            if value.hasPrefix("-") {
                XCTAssertTrue(waitUntil(timeout: 10) { fixture.log().contains("Refused to run the command of 'FavoriteAction'") }, fixture.log())
                continue
            }
            XCTAssertTrue(waitUntil(timeout: 10) { self.readRecorded().count == before + 1 }, "\(identifier) ran once: \(fixture.log().suffix(2000))")
            let name = value.replacingOccurrences(of: "\n", with: " ")
            XCTAssertEqual(readRecorded().last?.argv.prefix(5), [name, "to=" + value, "--id=" + identifier, value, name], identifier)
        }
        XCTAssertFalse(readRecorded().contains { $0.argv.first == "-rf" }, "the refused item never ran")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/tmp/qactd-pwned"))
    }

    func testABadCommandIsAConfigurationErrorAtStartAndAtReload() throws {
        let fixture = try makeFixture()
        try fixture.start()
        try fixture.writeConfiguration("[Actions]\nFavoriteAction=mail {nmae}\n")
        let reload = fixture.qactl(["reload"])
        XCTAssertEqual(reload.status, 1)
        XCTAssertTrue(reload.stderr.contains("\(fixture.configFile.path):8: [Actions] FavoriteAction: \"mail {nmae}\" names the unknown field \"{nmae}\""), reload.stderr)
        fixture.stop()
        let start = DaemonFixture.run(DaemonFixture.qactd, ["--config", fixture.configFile.path], environment: fixture.environment)
        XCTAssertEqual(start.status, 78)
        XCTAssertTrue(start.stderr.contains("[Actions] FavoriteAction: \"mail {nmae}\" names the unknown field"), start.stderr)
    }
}
