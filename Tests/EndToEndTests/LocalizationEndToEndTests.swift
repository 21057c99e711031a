import Foundation
import XCTest

/// Localized static titles as apps ship them: keys in the plist, the text in
/// `<lang>.lproj/InfoPlist.strings` beside it, read by the real daemon and qactl.
final class LocalizationEndToEndTests: XCTestCase {
    /// Every gettext variable the daemon reads, cleared, so the runner's own locale cannot leak in.
    private static let noLocale = ["LANGUAGE": "", "LC_ALL": "", "LC_MESSAGES": "", "LANG": ""]

    private func writeStrings(_ text: String, language: String, in fixture: DaemonFixture) throws {
        let folder = fixture.root.appendingPathComponent("\(language).lproj")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try text.write(to: folder.appendingPathComponent("InfoPlist.strings"), atomically: true, encoding: .utf8)
    }

    private func titles(_ fixture: DaemonFixture, _ arguments: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let result = fixture.qactl(["list", "--json"] + arguments)
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        let items = try XCTUnwrap(result.json()["items"] as? [[String: Any]], file: file, line: line)
        return items.compactMap { ($0["item"] as? [String: Any])?["title"] as? String }
    }

    func testTitlesFollowTheDaemonsLocaleAListsLanguageAndReloads() throws {
        let fixture = try DaemonFixture()
        try writeStrings("""
            /* Shortcut titles, French */
            "Search" = "Rechercher";
            "Search for an item" = "Rechercher un élément";
            Share = "Partager"; // unquoted key
            """, language: "fr", in: fixture)
        try writeStrings(#""Share" = "Share it";"#, language: "en", in: fixture)
        // Neither a .lproj folder without strings nor a file named like one is an error.
        try FileManager.default.createDirectory(at: fixture.root.appendingPathComponent("de.lproj"), withIntermediateDirectories: true)
        try Data().write(to: fixture.root.appendingPathComponent("notes.lproj"))
        fixture.daemonEnvironment = Self.noLocale.merging(["LANG": "fr_FR.UTF-8"]) { $1 }
        try fixture.start()

        XCTAssertEqual(try titles(fixture), ["Rechercher", "Partager"], "fr_FR.UTF-8 → fr_FR → fr")
        let human = fixture.qactl(["list"])
        XCTAssertTrue(human.stdout.contains("Rechercher un élément"), human.stdout)
        // No German: the development language (en here), then the key itself.
        XCTAssertEqual(try titles(fixture, ["--language", "de"]), ["Search", "Share it"])
        XCTAssertEqual(try titles(fixture, ["--language", "fr_CA.UTF-8"]), ["Rechercher", "Partager"])
        // The model keeps the keys: a type still names the item, whatever the language; the
        // item triggered is shown as `List` shows it.
        let triggered = fixture.qactl(["trigger", "--type", "SearchAction", "--json"])
        XCTAssertEqual(triggered.status, 0, triggered.stderr)
        XCTAssertEqual((try triggered.json()["item"] as? [String: Any])?["title"] as? String, "Rechercher", triggered.stdout)

        // Reload re-reads the strings files.
        try writeStrings(#""Search" = "Chercher"; "Share" = "Partager";"#, language: "fr", in: fixture)
        let reload = fixture.qactl(["reload"])
        XCTAssertEqual(reload.status, 0, reload.stderr)
        XCTAssertEqual(try titles(fixture), ["Chercher", "Partager"])

        // A broken strings file is refused at reload, naming file and line; the old text stays.
        let strings = fixture.root.appendingPathComponent("fr.lproj/InfoPlist.strings").path
        try writeStrings("\"Search\" = \"Chercher\";\n\"Share\" = \"Partager\"\n", language: "fr", in: fixture)
        let refused = fixture.qactl(["reload"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains("\(strings):2: expected ';'"), refused.stderr)
        XCTAssertEqual(try titles(fixture), ["Chercher", "Partager"])

        // … and at start-up: EX_CONFIG, naming file and line.
        fixture.stop()
        let start = DaemonFixture.run(DaemonFixture.qactd, ["--config", fixture.configFile.path], environment: fixture.environment)
        XCTAssertEqual(start.status, 78, start.stderr)
        XCTAssertTrue(start.stderr.contains("\(strings):2:"), start.stderr)
    }

    func testBundleIdentifierExpandsTypesAndLanguageListsApply() throws {
        let fixture = try DaemonFixture(extraConfiguration: "[Shortcuts]\nBundleIdentifier=org.example.Contacts\n")
        try """
            <plist version="1.0"><dict>
              <key>CFBundleDevelopmentRegion</key><string>de</string>
              <key>UIApplicationShortcutItems</key><array>
                <dict><key>UIApplicationShortcutItemType</key><string>$(PRODUCT_BUNDLE_IDENTIFIER).Search</string>
                      <key>UIApplicationShortcutItemTitle</key><string>SEARCH_TITLE</string></dict>
              </array></dict></plist>
            """.write(to: fixture.staticItems, atomically: true, encoding: .utf8)
        try writeStrings(#""SEARCH_TITLE" = "Suchen";"#, language: "de", in: fixture)
        try writeStrings(#""SEARCH_TITLE" = "Buscar";"#, language: "es", in: fixture)
        fixture.daemonEnvironment = Self.noLocale.merging(["LANGUAGE": "es:fr", "LANG": "C.UTF-8"]) { $1 }
        try fixture.start()

        let items = try XCTUnwrap(fixture.qactl(["list", "--json"]).json()["items"] as? [[String: Any]])
        XCTAssertEqual((items.first?["item"] as? [String: Any])?["type"] as? String, "org.example.Contacts.Search")
        XCTAssertEqual(try titles(fixture), ["Buscar"], "LANGUAGE wins over a C locale")
        XCTAssertEqual(try titles(fixture, ["--language", "it"]), ["Suchen"], "CFBundleDevelopmentRegion")
        XCTAssertEqual(fixture.qactl(["trigger", "--type", "org.example.Contacts.Search"]).status, 0)
    }

    func testValidateWarnsAboutBuildSettingsAndKeysWithoutTranslation() throws {
        let fixture = try DaemonFixture()
        let folder = fixture.root.appendingPathComponent("app")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("fr.lproj"), withIntermediateDirectories: true)
        let plist = folder.appendingPathComponent("Info.plist")
        try """
            <plist version="1.0"><dict><key>UIApplicationShortcutItems</key><array>
              <dict><key>UIApplicationShortcutItemType</key><string>$(PRODUCT_BUNDLE_IDENTIFIER).Search</string>
                    <key>UIApplicationShortcutItemTitle</key><string>SEARCH_TITLE</string></dict>
              <dict><key>UIApplicationShortcutItemType</key><string>Share</string>
                    <key>UIApplicationShortcutItemTitle</key><string>SHARE_TITLE</string>
                    <key>UIApplicationShortcutItemSubtitle</key><string>SHARE_SUBTITLE</string></dict>
            </array></dict></plist>
            """.write(to: plist, atomically: true, encoding: .utf8)
        let strings = folder.appendingPathComponent("fr.lproj/InfoPlist.strings")
        // UTF-16LE with a byte-order mark, as Xcode writes strings files.
        let text = "\"SEARCH_TITLE\" = \"Rechercher\";\n\"SHARE_TITLE\" = \"Partager\";\n"
        try Data([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }).write(to: strings)

        let result = fixture.qactl(["validate", plist.path])
        XCTAssertEqual(result.status, 0, "warnings do not fail validation: \(result.stderr)")
        XCTAssertTrue(result.stdout.contains("valid, 2 static items, translated into fr"), result.stdout)
        XCTAssertTrue(result.stderr.contains("warning: item 1: the type \"$(PRODUCT_BUNDLE_IDENTIFIER).Search\" holds $(PRODUCT_BUNDLE_IDENTIFIER)"), result.stderr)
        XCTAssertTrue(result.stderr.contains("BundleIdentifier="), result.stderr)
        XCTAssertTrue(result.stderr.contains("warning: item 2: no InfoPlist.strings beside the file translates the subtitle \"SHARE_SUBTITLE\""), result.stderr)
        XCTAssertFalse(result.stderr.contains("SHARE_TITLE"), "SHARE_TITLE is translated: \(result.stderr)")
        let json = try fixture.qactl(["validate", "--json", plist.path]).json()
        XCTAssertEqual((json["warnings"] as? [String])?.count, 2)
        XCTAssertEqual(json["languages"] as? [String], ["fr"])

        // Without strings files, titles are plain text: no translation warnings.
        let plain = fixture.qactl(["validate", fixture.staticItems.path])
        XCTAssertEqual(plain.status, 0)
        XCTAssertEqual(plain.stderr, "")

        try Data("\"SEARCH_TITLE\" = \"Rechercher\"\n".utf8).write(to: strings)
        let broken = fixture.qactl(["validate", plist.path])
        XCTAssertEqual(broken.status, 1)
        XCTAssertTrue(broken.stderr.contains("\(strings.path):1: expected ';'"), broken.stderr)
    }

    func testTheShippedFrenchTranslationCoversTheDemo() throws {
        let etc = DaemonFixture.repository.appendingPathComponent("etc/qactd")
        let result = DaemonFixture.run(DaemonFixture.qactl, ["validate", "--json", etc.appendingPathComponent("shortcuts.plist").path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "", "every demo title and subtitle has a French translation")
        XCTAssertEqual(try result.json()["languages"] as? [String], ["fr"])
    }
}
