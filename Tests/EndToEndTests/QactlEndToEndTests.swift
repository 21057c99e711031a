import Foundation
import TestSupport
import XCTest

/// qactd and qactl as a user runs them: real processes, a real socket, files in a scratch folder.
final class QactlEndToEndTests: XCTestCase {
    func testBeforeFirstLaunchOnlyStaticItemsAreShownThenFavoritesFollowResignActive() throws {
        let fixture = try DaemonFixture()
        try fixture.start()

        let before = try fixture.qactl(["list", "--all", "--json"]).json()
        XCTAssertEqual(before["launched"] as? Bool, false)
        let beforeItems = try XCTUnwrap(before["items"] as? [[String: Any]])
        XCTAssertEqual(beforeItems.filter { $0["displayed"] as? Bool == true }.count, 2, "only the static Search and Share")
        XCTAssertEqual(beforeItems.count, 2, "no dynamic set exists before the first ResignActive")

        let resign = fixture.qactl(["resign-active"])
        XCTAssertEqual(resign.status, 0, resign.stderr)
        XCTAssertEqual(resign.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "updated: 4 dynamic items, generation 1")

        let list = fixture.qactl(["list"])
        XCTAssertEqual(list.status, 0)
        let rows = list.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.count, 5, "a header and four displayed items:\n\(list.stdout)")
        XCTAssertTrue(rows[0].hasPrefix("#  SOURCE"), rows[0])
        XCTAssertTrue(rows[1].contains("static") && rows[1].contains("Search for an item"))
        XCTAssertTrue(rows[3].contains("dynamic") && rows[3].contains("Ada Lovelace") && rows[3].contains("ada@analytical.example"))
        XCTAssertTrue(rows[4].contains("Arnold Schönberg"), "favorites in accent-insensitive name order")

        let all = try fixture.qactl(["list", "--all", "--json"]).json()
        let items = try XCTUnwrap(all["items"] as? [[String: Any]])
        XCTAssertEqual(items.count, 6, "2 static + 4 favorites, not capped")
        XCTAssertEqual(items.map { $0["position"] as? Int }, [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(items.map { $0["displayed"] as? Bool }, [true, true, true, true, false, false])
        let hidden = try XCTUnwrap(items[5]["item"] as? [String: Any])
        XCTAssertEqual(hidden["title"] as? String, "Margaret Hamilton")
        let userInfo = try XCTUnwrap(hidden["userInfo"] as? [String: Any])
        XCTAssertEqual(userInfo["contactIdentifier"] as? String, "margaret-hamilton")
        XCTAssertEqual(userInfo["appVersion"] as? String, "1.0", "CFBundleShortVersionString of the static items file")
        XCTAssertEqual(try fixture.qactl(["list", "--limit", "3", "--json"]).json()["items"].map { ($0 as? [Any])?.count }, 3)
    }

    func testTriggerByPositionTypeAndContactWithEveryError() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)

        let byPosition = try fixture.qactl(["trigger", "1", "--json"]).json()
        XCTAssertEqual((byPosition["item"] as? [String: Any])?["type"] as? String, "SearchAction")
        XCTAssertEqual(byPosition["delivery"] as? String, "launch", "no app is connected")
        XCTAssertEqual(byPosition["stale"] as? Bool, false)

        let favorite = try fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "grace-hopper", "--json"]).json()
        XCTAssertEqual((favorite["contact"] as? [String: Any])?["name"] as? String, "Grace Hopper")
        XCTAssertEqual((favorite["contact"] as? [String: Any])?["email"] as? String, "grace@navy.example")

        let human = fixture.qactl(["trigger", "3"])
        XCTAssertEqual(human.status, 0)
        XCTAssertTrue(human.stdout.contains("Ada Lovelace (FavoriteAction)"), human.stdout)
        XCTAssertTrue(human.stdout.contains("delivery  at launch"), human.stdout)

        let missing = fixture.qactl(["trigger", "9", "--json"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(try missing.json()["error"] as? String, "io.qactd.QuickActions.NoSuchShortcut")
        XCTAssertTrue(missing.stderr.contains("9"), "the message names the position: \(missing.stderr)")

        let unknownType = fixture.qactl(["trigger", "--type", "NoSuchAction"])
        XCTAssertEqual(unknownType.status, 1)
        XCTAssertTrue(unknownType.stderr.contains("NoSuchAction"), unknownType.stderr)

        // The favorite's card disappears; the quick action is still on the Home Screen until the
        // next ResignActive, and picking it says so, like Android's disabled shortcuts.
        try FileManager.default.removeItem(at: fixture.contacts.appendingPathComponent("personal/ada-lovelace.vcf"))
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        let removed = fixture.qactl(["trigger", "--type", "FavoriteAction", "--contact", "ada-lovelace", "--json"])
        XCTAssertEqual(removed.status, 1)
        XCTAssertEqual(try removed.json()["error"] as? String, "io.qactd.QuickActions.ContactRemoved")
        XCTAssertTrue(removed.stderr.contains("This contact is no longer available"), removed.stderr)

        let status = try fixture.qactl(["status", "--json"]).json()
        let usage = try XCTUnwrap(status["usage"] as? [String: Int])
        XCTAssertEqual(usage["SearchAction"], 1)
        XCTAssertEqual(usage["FavoriteAction/grace-hopper"], 1)
        XCTAssertEqual(usage["FavoriteAction/ada-lovelace"], 1, "failed triggers are not counted")
    }

    func testAnAppUpdateMarksOlderDynamicItemsStaleUntilTheNextResignActive() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(try fixture.qactl(["trigger", "3", "--json"]).json()["stale"] as? Bool, false)

        let plist = try String(contentsOf: fixture.staticItems, encoding: .utf8)
        try plist.replacingOccurrences(of: "<string>1.0</string>", with: "<string>2.0</string>")
            .write(to: fixture.staticItems, atomically: true, encoding: .utf8)
        XCTAssertEqual(fixture.qactl(["reload"]).status, 0)
        let stale = try fixture.qactl(["trigger", "3", "--json"]).json()
        XCTAssertEqual(stale["stale"] as? Bool, true)
        XCTAssertEqual(fixture.qactl(["trigger", "3"]).stdout.contains("stale"), true)

        let resign = try fixture.qactl(["resign-active", "--json"]).json()
        XCTAssertEqual(resign["changed"] as? Bool, true, "the items now carry appVersion 2.0")
        XCTAssertEqual(try fixture.qactl(["trigger", "3", "--json"]).json()["stale"] as? Bool, false)
    }

    func testExitStatusesAndTheHintWhenTheDaemonIsUnreachable() throws {
        let fixture = try DaemonFixture()
        let unreachable = fixture.qactl(["status"])
        XCTAssertEqual(unreachable.status, 69)
        XCTAssertTrue(unreachable.stderr.contains(fixture.socketPath), unreachable.stderr)
        XCTAssertTrue(unreachable.stderr.contains("systemctl --user start qactd.socket"), unreachable.stderr)
        let unreachableJSON = fixture.qactl(["status", "--json"])
        XCTAssertEqual(try unreachableJSON.json()["error"] as? String, "DaemonUnreachable")

        XCTAssertEqual(fixture.qactl(["trigger"]).status, 64, "no item named")
        XCTAssertEqual(fixture.qactl(["trigger", "1", "--type", "X"]).status, 64)
        XCTAssertEqual(fixture.qactl(["list", "--limit", "many"]).status, 64)
        XCTAssertEqual(fixture.qactl(["frobnicate"]).status, 64)

        try fixture.start()
        let notFound = fixture.qactl(["contact", "nobody"])
        XCTAssertEqual(notFound.status, 1)
        XCTAssertTrue(notFound.stderr.contains("'nobody'"), notFound.stderr)
        let contact = fixture.qactl(["contact", "ada-lovelace"])
        XCTAssertEqual(contact.status, 0)
        XCTAssertTrue(contact.stdout.contains("countess@lovelace.example"), "all emails are shown: \(contact.stdout)")
        XCTAssertEqual(fixture.qactl(["status", "--socket", fixture.root.appendingPathComponent("none.sock").path]).status, 69)
    }

    /// `qactl list` and `qactl status` with plain options are read without swift-argument-parser
    /// (for start-up time); the `--option=value` spelling still goes through it. Both
    /// paths must print the same bytes and exit the same way, and anything unusual must reach
    /// swift-argument-parser's own errors and help.
    func testEverydayInvocationsReadTheSameOnTheFastAndTheFullParser() throws {
        let fixture = try DaemonFixture()
        let unreachableFast = fixture.qactl(["list", "--json"])
        let unreachableFull = fixture.qactl(["list", "--json", "--limit=2"])
        XCTAssertEqual(unreachableFast.status, 69)
        XCTAssertEqual(unreachableFast.status, unreachableFull.status)
        XCTAssertEqual(unreachableFast.stdout, unreachableFull.stdout)
        XCTAssertEqual(unreachableFast.stderr, unreachableFull.stderr)

        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        let socket = fixture.socketPath
        let pairs: [(fast: [String], full: [String])] = [
            (["list"], ["list", "--limit=4"]),
            (["list", "--json"], ["list", "--json", "--limit=4"]),
            (["list", "--all", "--json"], ["list", "--json", "--all", "--socket=\(socket)"]),
            (["list", "--limit", "3", "--all"], ["list", "--all", "--limit=3"]),
            (["list", "--language", "fr", "--socket", socket, "--json"], ["list", "--language=fr", "--json"]),
            (["list", "--limit", "0"], ["list", "--limit=0"]),
        ]
        for (fast, full) in pairs {
            let viaFast = fixture.qactl(fast), viaFull = fixture.qactl(full)
            XCTAssertEqual(viaFast.status, 0, "\(fast): \(viaFast.stderr)")
            XCTAssertEqual(viaFast.status, viaFull.status, "\(fast) against \(full)")
            XCTAssertEqual(viaFast.stdout, viaFull.stdout, "\(fast) against \(full)")
            XCTAssertEqual(viaFast.stderr, viaFull.stderr, "\(fast) against \(full)")
        }
        // `used N× …` rows count the calls themselves, so they differ between two calls.
        func withoutUsage(_ text: String) -> String {
            text.split(separator: "\n").filter { !$0.hasPrefix("  used") }.joined(separator: "\n")
        }
        let statusFast = fixture.qactl(["status", "--socket", socket]), statusFull = fixture.qactl(["status", "--socket=\(socket)"])
        XCTAssertEqual(statusFast.status, 0, statusFast.stderr)
        XCTAssertTrue(statusFast.stdout.hasPrefix("qactd "), statusFast.stdout)
        XCTAssertEqual(withoutUsage(statusFast.stdout), withoutUsage(statusFull.stdout))

        // Forms the fast path leaves alone end in swift-argument-parser's words and statuses.
        let repeated = fixture.qactl(["list", "--json", "--json"])
        XCTAssertEqual(repeated.status, 0, "a repeated flag is still accepted: \(repeated.stderr)")
        XCTAssertNotNil(try? repeated.json()["items"])
        let negative = fixture.qactl(["list", "--limit", "-1"])
        XCTAssertEqual(negative.status, 64)
        XCTAssertTrue(negative.stderr.contains("--limit"), negative.stderr)
        let unknown = fixture.qactl(["status", "--all"])
        XCTAssertEqual(unknown.status, 64)
        XCTAssertTrue(unknown.stderr.contains("--all"), unknown.stderr)
        let missingValue = fixture.qactl(["list", "--socket"])
        XCTAssertEqual(missingValue.status, 64, missingValue.stderr)
        let help = fixture.qactl(["list", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("USAGE: qactl list"), help.stdout)
    }

    func testValidateReportsTheFileTheItemIndexAndTheKey() throws {
        let fixture = try DaemonFixture()
        let good = fixture.qactl(["validate", fixture.staticItems.path])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stdout.contains("valid, 2 static items, app version 1.0"), good.stdout)

        // The seeds' snippet (lines 20–42 of the iOS seed document, kept verbatim in the
        // repository so the test needs nothing outside it): no <plist> wrapper at all.
        let snippet = DaemonFixture.repository.appendingPathComponent("Tests/integration/fixtures/seed-shortcut-items-snippet.plist")
        let fromSeed = try fixture.qactl(["validate", "--json", snippet.path]).json()
        XCTAssertEqual((fromSeed["items"] as? [[String: Any]])?.map { $0["type"] as? String }, ["SearchAction", "ShareAction"])

        let bad = fixture.root.appendingPathComponent("bad.plist")
        try """
            <plist version="1.0"><array>
              <dict><key>UIApplicationShortcutItemType</key><string>A</string><key>UIApplicationShortcutItemTitle</key><string>A</string></dict>
              <dict><key>UIApplicationShortcutItemType</key><string>B</string><key>UIApplicationShortcutItemTitle</key><string>B</string>
                    <key>UIApplicationShortcutItemIconType</key><string>UIApplicationShortcutIconTypeSparkles</string></dict>
            </array></plist>
            """.write(to: bad, atomically: true, encoding: .utf8)
        let invalid = fixture.qactl(["validate", bad.path])
        XCTAssertEqual(invalid.status, 1)
        for expected in [bad.path, "UIApplicationShortcutItems[1]", "UIApplicationShortcutItemIconType", "Sparkles"] {
            XCTAssertTrue(invalid.stderr.contains(expected), "'\(expected)' missing from: \(invalid.stderr)")
        }
        XCTAssertEqual(try fixture.qactl(["validate", "--json", bad.path]).json()["error"] as? String, "InvalidStaticItems")
        XCTAssertEqual(fixture.qactl(["validate", fixture.root.appendingPathComponent("missing.plist").path]).status, 1)
    }

    func testInvalidContactFilesAreSkippedListedWithAReasonAndHideNothingElse() throws {
        let fixture = try DaemonFixture()
        try fixture.write(contact: "broken/not-a-card.vcf", "this is not a vCard\n")
        try Data([0x42, 0x45, 0x47, 0x00, 0x49, 0x4e]).write(to: fixture.contacts.appendingPathComponent("broken/binary.vcf"))
        try Data(repeating: 0x41, count: 2 << 20).write(to: fixture.contacts.appendingPathComponent("broken/huge.vcf"))
        try fixture.write(contact: "broken/.hidden.vcf", "ignored\n")
        try fixture.write(contact: "broken/backup.vcf~", "ignored\n")
        try fixture.start()

        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual(status["contacts"] as? Int, 6, "the good contacts are all there")
        let invalid = try XCTUnwrap(status["invalidFiles"] as? [[String: String]])
        XCTAssertEqual(invalid.map { URL(fileURLWithPath: $0["path"] ?? "").lastPathComponent }, ["binary.vcf", "huge.vcf", "not-a-card.vcf"])
        XCTAssertTrue(invalid[0]["reason"]?.lowercased().contains("binary") ?? false, "\(invalid[0])")
        XCTAssertTrue(invalid[1]["reason"]?.contains("1048576") ?? false, "the limit is named: \(invalid[1])")
        XCTAssertTrue(invalid[2]["reason"]?.lowercased().contains("line 1") ?? false, "the line is named: \(invalid[2])")
        let human = fixture.qactl(["status"]).stdout
        XCTAssertTrue(human.contains("3 invalid files") && human.contains("not-a-card.vcf"), human)
    }

    func testResignActiveUsesTheLiveIndexAndAnUnchangedSetWritesNothing() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let parsedBefore = try fixture.qactl(["status", "--json"]).json()["filesParsed"] as? Int
        XCTAssertEqual(try fixture.qactl(["resign-active", "--json"]).json()["changed"] as? Bool, true)
        let written = try FileManager.default.attributesOfItem(atPath: fixture.stateFile.path)
        let second = try fixture.qactl(["resign-active", "--json"]).json()
        XCTAssertEqual(second["changed"] as? Bool, false)
        XCTAssertEqual(second["generation"] as? Int, 1)
        let after = try FileManager.default.attributesOfItem(atPath: fixture.stateFile.path)
        XCTAssertEqual(after[.systemFileNumber] as? Int, written[.systemFileNumber] as? Int, "no new file was renamed into place")
        XCTAssertEqual(after[.modificationDate] as? Date, written[.modificationDate] as? Date)
        XCTAssertEqual(try fixture.qactl(["status", "--json"]).json()["filesParsed"] as? Int, parsedBefore, "ResignActive never re-reads the contacts directory")
        let mode = try FileManager.default.attributesOfItem(atPath: fixture.stateFile.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }

    func testStateSurvivesARestartAndACorruptStateFileIsMovedAside() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["resign-active"]).status, 0)
        XCTAssertEqual(fixture.qactl(["trigger", "4"]).status, 0)
        let before = fixture.qactl(["list", "--all", "--json"]).stdout
        XCTAssertEqual(fixture.stop(), 0, "SIGTERM ends the daemon with status 0")
        XCTAssertFalse(FileManager.default.fileExists(atPath: fixture.socketPath), "the socket file is removed on exit")

        try fixture.start()
        XCTAssertEqual(fixture.qactl(["list", "--all", "--json"]).stdout, before, "same generation, launched flag and items")
        let status = try fixture.qactl(["status", "--json"]).json()
        XCTAssertEqual((status["usage"] as? [String: Int])?["FavoriteAction/arnold-schoenberg"], 1)
        fixture.stop()

        try Data("{\"formatVersion\": 1, \"generation\": ".utf8).write(to: fixture.stateFile)
        try fixture.start()
        let fresh = try fixture.qactl(["list", "--all", "--json"]).json()
        XCTAssertEqual(fresh["generation"] as? Int, 0)
        XCTAssertEqual(fresh["launched"] as? Bool, false)
        let asides = try FileManager.default.contentsOfDirectory(atPath: fixture.stateDirectory.path).filter { $0.hasPrefix("state.json.corrupt-") }
        XCTAssertEqual(asides.count, 1, "the corrupt file is kept for inspection")
        XCTAssertTrue(fixture.log().contains("moved it aside"), fixture.log())
    }

    func testEveryReadOfTheStateFileParsesWhileResignActiveIsHammered() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let stop = fixture.root.appendingPathComponent("stop-reading")
        reader.arguments = [
            "python3", "-c",
            """
            import json, os, sys, time
            path, stop = sys.argv[1], sys.argv[2]
            reads = bad = 0
            deadline = time.monotonic() + 120  # never outlive a test that failed before it said stop
            while not os.path.exists(stop) and time.monotonic() < deadline:
                try:
                    with open(path, 'rb') as f: data = f.read()
                except FileNotFoundError:
                    continue
                reads += 1
                try: json.loads(data)
                except ValueError: bad += 1
            print(reads, bad)
            """,
            fixture.stateFile.path, stop.path,
        ]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        defer {
            _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
            reader.waitUntilExit()
        }

        let card = fixture.contacts.appendingPathComponent("work/alan-turing.vcf")
        let plain = try String(contentsOf: card, encoding: .utf8)
        var generations = Set<Int>()
        for round in 0..<60 {
            let text = round % 2 == 0 ? plain.replacingOccurrences(of: "END:VCARD", with: "CATEGORIES:favorite\nEND:VCARD") : plain
            try text.write(to: card, atomically: true, encoding: .utf8)
            // The watcher picks the saved card up; no reload needed.
            let favorites = round % 2 == 0 ? 5 : 4
            XCTAssertTrue(waitUntil(timeout: 10) {
                (try? fixture.qactl(["status", "--json"]).json()["favorites"] as? Int) == favorites
            }, "round \(round): the index never showed \(favorites) favorites")
            let reply = try fixture.qactl(["resign-active", "--json"]).json()
            XCTAssertEqual(reply["changed"] as? Bool, true, "round \(round): the favorites toggled")
            generations.insert(reply["generation"] as? Int ?? -1)
        }
        _ = FileManager.default.createFile(atPath: stop.path, contents: nil)
        reader.waitUntilExit()
        let counts = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(counts.count, 2)
        XCTAssertGreaterThan(counts.first ?? 0, 100, "the reader really ran alongside")
        XCTAssertEqual(counts.last, 0, "every read of the state file was a complete JSON document")
        XCTAssertEqual(generations.count, 60)
    }

    func testReloadKeepsThePreviousStaticItemsWhenTheNewFileIsInvalid() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        try "<plist><array><dict><key>UIApplicationShortcutItemTitle</key><string>No type</string></dict></array></plist>"
            .write(to: fixture.staticItems, atomically: true, encoding: .utf8)
        let reload = fixture.qactl(["reload", "--json"])
        XCTAssertEqual(reload.status, 1)
        XCTAssertEqual(try reload.json()["error"] as? String, "io.qactd.QuickActions.InvalidConfiguration")
        XCTAssertTrue(reload.stderr.contains("UIApplicationShortcutItems[0]") && reload.stderr.contains("UIApplicationShortcutItemType"), reload.stderr)
        XCTAssertEqual((try fixture.qactl(["list", "--json"]).json()["items"] as? [Any])?.count, 2, "Search and Share are still served")

        try "[Shortcuts]\nDisplayLimit=four\n".write(to: fixture.configFile, atomically: true, encoding: .utf8)
        let badConfig = fixture.qactl(["reload"])
        XCTAssertEqual(badConfig.status, 1)
        XCTAssertTrue(badConfig.stderr.contains("qactd.conf:2") && badConfig.stderr.contains("DisplayLimit"), badConfig.stderr)
    }

    func testStartUpRefusesInvalidStaticItemsAndAnotherDaemonOnTheSameSocket() throws {
        let fixture = try DaemonFixture()
        try fixture.start()
        let second = DaemonFixture.run(DaemonFixture.qactd, ["--config", fixture.configFile.path], environment: fixture.environment)
        XCTAssertNotEqual(second.status, 0)
        XCTAssertTrue(second.stderr.contains("already listening") && second.stderr.contains(fixture.socketPath), second.stderr)
        // The generic server takes the product's name from the service info: the wording stays the daemon's.
        XCTAssertTrue(second.stderr.contains("Another qactd is already listening on '\(fixture.socketPath)'."), second.stderr)
        XCTAssertEqual(fixture.qactl(["status"]).status, 0, "the first daemon is unharmed")

        let socketMode = try FileManager.default.attributesOfItem(atPath: fixture.socketPath)[.posixPermissions] as? Int
        XCTAssertEqual(socketMode, 0o600)
        let folderMode = try FileManager.default.attributesOfItem(atPath: (fixture.socketPath as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        XCTAssertEqual(folderMode, 0o700)

        // A daemon that was SIGKILLed leaves its socket file behind: the next start replaces it.
        if let process = fixture.daemon { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        XCTAssertTrue(FileManager.default.fileExists(atPath: fixture.socketPath))
        try fixture.start()
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
        fixture.stop()

        try "<plist><array><dict><key>UIApplicationShortcutItemType</key><string></string></dict></array></plist>"
            .write(to: fixture.staticItems, atomically: true, encoding: .utf8)
        let refused = DaemonFixture.run(DaemonFixture.qactd, ["--config", fixture.configFile.path], environment: fixture.environment)
        XCTAssertEqual(refused.status, 78, "EX_CONFIG")
        XCTAssertTrue(refused.stderr.contains("UIApplicationShortcutItems[0]") && refused.stderr.contains("UIApplicationShortcutItemType"), refused.stderr)
    }

    func testTheDaemonStartsWithNoConfigurationAtAll() throws {
        let fixture = try DaemonFixture(copyDemo: false)
        let home = fixture.root.appendingPathComponent("home")
        let runtime = fixture.root.appendingPathComponent("xdg-runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = fixture.environment
        environment["HOME"] = home.path
        environment["XDG_RUNTIME_DIR"] = runtime.path
        for name in ["XDG_CONFIG_HOME", "XDG_STATE_HOME", "STATE_DIRECTORY", "QACTD_SOCKET"] { environment[name] = nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonFixture.qactd)
        process.environment = environment
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        let client = { DaemonFixture.run(DaemonFixture.qactl, ["status", "--json"], environment: environment) }
        XCTAssertTrue(waitUntil(timeout: 10) { client().status == 0 }, "qactd answers at $XDG_RUNTIME_DIR/qactd/qactd.sock")
        let status = try client().json()
        XCTAssertEqual(status["contactsDirectory"] as? String, home.path + "/.local/share/contacts")
        XCTAssertEqual(status["stateFile"] as? String, home.path + "/.local/state/qactd/state.json")
        XCTAssertEqual(status["socket"] as? String, runtime.path + "/qactd/qactd.sock")
        XCTAssertEqual(status["contacts"] as? Int, 0)
    }
}
