import Foundation
import QuickActions
import TestSupport
import XCTest

/// The pure parts of the desktop-entry export: escaping, parsing, composing, identifiers, icons.
final class DesktopEntryTests: XCTestCase {
    /// Contact names that would add a key, a group or an argument if any escaping slipped.
    static let hostileNames = [
        "Ann\n[Desktop Entry]\nExec=rm -rf ~",
        "Bob\nExec=/bin/sh -c 'touch /tmp/pwned'",
        "%u %f %% 100%",
        "5%\u{301} off, a % before a combining mark",
        "\"Quoted\" 'single' `tick` $HOME",
        "semi;colon=equals",
        "back\\slash\\\\double\\s\\n",
        "  leading and trailing  ",
        "tab\tand\rreturn",
        "Émilie 👩‍💻 李雷",
        "bell\u{7}and\u{1B}escape",
    ]

    /// A reader of values as the specification defines it (what GLib does).
    private func readValue(_ raw: String) -> String {
        DesktopEntryEscaping.unescapedValue(raw.trimmingCharacters(in: .init(charactersIn: " \t")))
    }

    func testValuesStayOnOneLineAndReadBackExactly() {
        for name in Self.hostileNames {
            let escaped = DesktopEntryEscaping.value(name)
            XCTAssertFalse(escaped.contains("\n"), "\(name.debugDescription) → \(escaped.debugDescription)")
            XCTAssertFalse(escaped.contains("\r"))
            XCTAssertFalse(escaped.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, escaped.debugDescription)
            let expected = String(String.UnicodeScalarView(name.unicodeScalars.map {
                ($0.value < 0x20 && !["\n", "\t", "\r"].contains($0)) || $0.value == 0x7F ? " " : $0
            }))
            XCTAssertEqual(readValue(escaped), expected, "\(name.debugDescription) reads back as written")
        }
        XCTAssertEqual(DesktopEntryEscaping.value(" a b "), "\\sa b\\s")
        XCTAssertEqual(DesktopEntryEscaping.value("a\\b\nc"), "a\\\\b\\nc")
    }

    /// The `Exec` value, read by GLib and launched (GIO's `GDesktopAppInfo`, a recorder as the
    /// program), gives the program exactly the arguments, however hostile.
    func testExecArgumentsReadBackExactly() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-exec-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let oracle = try GLibLaunchOracle(folder: folder)
        let names = Self.hostileNames.filter { !$0.unicodeScalars.contains(where: { $0 == "\u{7}" }) }
        var entry = "[Desktop Entry]\nType=Application\nName=Oracle\nExec=/bin/true\nActions=\(names.indices.map { "a\($0);" }.joined())\n"
        var expected: [[String]] = []
        for (number, name) in names.enumerated() {
            let arguments = ["trigger", "--socket=/run/user/1000/qactd/qactd.sock", "--type=FavoriteAction", "--contact=\(name)"]
            let exec = DesktopEntryEscaping.exec([oracle.program] + arguments)
            XCTAssertFalse(exec.contains("\n"), exec.debugDescription)
            entry += "\n[Desktop Action a\(number)]\nName=a\(number)\nExec=\(exec)\n"
            expected.append(arguments)
        }
        try entry.write(toFile: folder + "/oracle.desktop", atomically: true, encoding: .utf8)
        XCTAssertEqual(try oracle.arguments(desktopFile: folder + "/oracle.desktop", launches: names.indices.map { "a\($0)" }), expected)
        XCTAssertEqual(DesktopEntryEscaping.execArgument("plain-arg_1.x"), "plain-arg_1.x")
        XCTAssertEqual(DesktopEntryEscaping.execArgument("100%"), "100%%")
        XCTAssertEqual(DesktopEntryEscaping.execArgument("%%x%"), "%%%%x%%")
        // A combining mark after the % makes one character of them; the reader sees bytes.
        XCTAssertEqual(DesktopEntryEscaping.execArgument("5%\u{301}é"), "5%%\u{301}é")
        XCTAssertEqual(DesktopEntryEscaping.execArgument("a\"b"), "\"a\\\"b\"")
        XCTAssertEqual(DesktopEntryEscaping.execArgument(""), "\"\"")
        XCTAssertEqual(DesktopEntryEscaping.exec(["a\\b"]), "\"a\\\\\\\\b\"", "the backslash is escaped twice: in the quotes, then as a value")
    }

    static let appEntry = """
        # The app's own comment
        [Desktop Entry]
        Type=Application
        Name=Contacts
        Name[fr]=Contacts FR
        Comment=Keeps people
        Icon=org.example.Contacts
        Exec=contacts %U
        Actions=new-window;

        X-Vendor-Key=kept as it is

        [Desktop Action new-window]
        Name=New Window
        Exec=contacts --new-window
        """

    func testComposeKeepsEveryLineAndAppendsTheActions() throws {
        let source = try DesktopEntryDocument(parsing: Self.appEntry)
        XCTAssertEqual(source.actionIdentifiers, ["new-window"])
        XCTAssertEqual(source.value(of: "Icon"), "org.example.Contacts")
        let actions = [
            DesktopQuickAction(identifier: "qactd-Search", name: "Search", localizedNames: [DesktopQuickAction.LocalizedName(locale: "fr", name: "Chercher")], icon: "system-search", command: ["/usr/bin/qactl", "trigger", "--type=Search"]),
            DesktopQuickAction(identifier: "qactd-FavoriteAction-ann", name: Self.hostileNames[0], icon: nil, command: ["/usr/bin/qactl", "trigger", "--contact=\(Self.hostileNames[1])"]),
        ]
        let text = DesktopEntryExport.compose(source: source, sourcePath: "/usr/share/applications/org.example.Contacts.desktop", socketPath: "/run/q.sock", actions: actions)
        let composed = try DesktopEntryDocument(parsing: text)
        for line in Self.appEntry.split(separator: "\n", omittingEmptySubsequences: true) where !line.hasPrefix("Actions=") {
            XCTAssertTrue(text.contains(line + "\n"), "kept: \(line)")
        }
        XCTAssertEqual(composed.actionIdentifiers, ["new-window", "qactd-Search", "qactd-FavoriteAction-ann"], "the app's own actions first")
        XCTAssertEqual(composed.groupNames, ["Desktop Entry", "Desktop Action new-window", "Desktop Action qactd-Search", "Desktop Action qactd-FavoriteAction-ann"],
                       "a hostile name adds no group")
        XCTAssertTrue(DesktopEntryExport.isGenerated(composed))
        XCTAssertFalse(DesktopEntryExport.isGenerated(source))
        let exec = try XCTUnwrap(composed.value(of: "Exec"))
        XCTAssertEqual(exec, "contacts %U", "the app's own Exec, not replaced by a name's Exec=")
        XCTAssertEqual(composed.value(of: "Name[fr]", in: "Desktop Action qactd-Search"), "Chercher")
        XCTAssertEqual(composed.value(of: "Icon", in: "Desktop Action qactd-Search"), "system-search")
        let keys = composed.lines.compactMap { line -> String? in if case .entry(let key, _, _) = line { return key } else { return nil } }
        XCTAssertEqual(keys.filter { $0 == "Exec" }.count, 4, "one Exec per group, no more")
        XCTAssertEqual(readValue(try XCTUnwrap(composed.value(of: "Name", in: "Desktop Action qactd-FavoriteAction-ann"))), Self.hostileNames[0])
        XCTAssertEqual(composed.value(of: "Exec", in: "Desktop Action qactd-FavoriteAction-ann"),
                       #"/usr/bin/qactl trigger "--contact=Bob\nExec=/bin/sh -c 'touch /tmp/pwned'""#,
                       "the name's newline escaped, the argument quoted (GLib reads such lines back in testExecArgumentsReadBackExactly)")
        // The mark goes at the end of [Desktop Entry]'s keys, before the blank line and the next group.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let mark = try XCTUnwrap(lines.firstIndex(of: "X-Qactd-Generated=true"))
        XCTAssertEqual(lines[mark - 2], "X-Vendor-Key=kept as it is")
        XCTAssertEqual(lines[mark - 1], "Actions=new-window;qactd-Search;qactd-FavoriteAction-ann;")
        XCTAssertEqual(lines[mark + 2], "X-Qactd-Socket=/run/q.sock")
        XCTAssertEqual(lines[mark + 3], "", "the blank line before the next group stays")
    }

    func testAnEntryWithoutActionsGetsTheKeyAndAComposedCopyIsNotExtendedTwice() throws {
        let source = try DesktopEntryDocument(parsing: "[Desktop Entry]\nType=Application\nName=App\nExec=app\n")
        let action = DesktopQuickAction(identifier: "qactd-A", name: "A", icon: nil, command: ["qactl"])
        let text = DesktopEntryExport.compose(source: source, sourcePath: "/x/app.desktop", socketPath: "/run/q.sock", actions: [action])
        XCTAssertEqual(text, "[Desktop Entry]\nType=Application\nName=App\nExec=app\nActions=qactd-A;\nX-Qactd-Generated=true\nX-Qactd-Source=/x/app.desktop\nX-Qactd-Socket=/run/q.sock\n\n[Desktop Action qactd-A]\nName=A\nExec=qactl\n")
        let none = DesktopEntryExport.compose(source: source, sourcePath: "/x/app.desktop", socketPath: "/run/q.sock", actions: [])
        XCTAssertFalse(none.contains("Actions="), "no empty Actions= key")
    }

    /// GLib sends a D-Bus activatable app its actions over D-Bus (ActivateAction), which it
    /// cannot answer for qactd's: the copy turns that off so launchers run the actions' Exec.
    func testADBusActivatableEntryIsTurnedIntoAnExecOne() throws {
        let source = try DesktopEntryDocument(parsing: "[Desktop Entry]\nType=Application\nName=App\nExec=app\nDBusActivatable=true\n")
        let action = DesktopQuickAction(identifier: "qactd-A", name: "A", icon: nil, command: ["qactl"])
        let composed = try DesktopEntryDocument(parsing: DesktopEntryExport.compose(source: source, sourcePath: "/x/app.desktop", socketPath: "/run/q.sock", actions: [action]))
        XCTAssertEqual(composed.value(of: "DBusActivatable"), "false")
        XCTAssertEqual(composed.value(of: "X-Qactd-Source-DBusActivatable"), "true")
        let unchanged = DesktopEntryExport.compose(source: source, sourcePath: "/x/app.desktop", socketPath: "/run/q.sock", actions: [])
        XCTAssertTrue(unchanged.contains("DBusActivatable=true\n"), "without quick actions nothing needs turning off")
    }

    /// The main group of `text` without the keys the copy adds or rewrites (`Actions`, qactd's
    /// marks, and `DBusActivatable` with its record), line for line, blank lines left out.
    private func mainGroupAsTheAppHasIt(_ text: String) throws -> [String] {
        let added: Set<String> = ["Actions", "DBusActivatable", DesktopEntryExport.generatedMarkKey, DesktopEntryExport.sourceKey,
                                  DesktopEntryExport.socketKey, DesktopEntryExport.dbusActivatableKey]
        var lines: [String] = []
        for line in try DesktopEntryDocument(parsing: text).lines {
            if case .groupHeader(let name, _) = line, name != "Desktop Entry" { break }
            if case .entry(let key, _, _) = line, added.contains(key) { continue }
            if case .other(let text) = line, text.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            lines.append(line.text)
        }
        return lines
    }

    /// GNOME Shell replaces the object of an app (and a running app loses its windows from its
    /// icon) when one of the main group's compared keys changes: whatever the actions, the copy's
    /// main group is the app's own, line for line, apart from `Actions` and qactd's marks; so
    /// each rewrite differs from the one before only outside the compared keys.
    func testTheMainGroupIsTheAppsOwnWhateverTheActions() throws {
        let entries = [
            Self.appEntry,
            "[Desktop Entry]\nType=Application\nName=Files\nName[de]=Dateien\nGenericName=File Manager\nComment=Browse\n"
                + "X-GNOME-FullName=GNOME Files\nIcon=folder\nTryExec=nautilus\nExec=/usr/bin/nautilus --new-window %U\n"
                + "Keywords=folder;disk\nOnlyShowIn=GNOME;\nDBusActivatable=true\n",
            "[Desktop Entry]\nType=Application\nName=App\nExec=\"/opt/x y/a=b\" %f\nNoDisplay=false\nActions=a;\n\n[Desktop Action a]\nName=A\nExec=app -a\n",
            "[Desktop Entry]\nType=Application\nName=App\nExec=-app\n",
        ]
        for entry in entries {
            let source = try DesktopEntryDocument(parsing: entry)
            func compose(_ names: [String]) -> String {
                DesktopEntryExport.compose(source: source, sourcePath: "/x/app.desktop", socketPath: "/run/q.sock", actions: names.map {
                    DesktopQuickAction(identifier: "qactd-\($0)", name: $0, icon: nil, command: ["/usr/bin/qactl", "trigger", "--type=\($0)"])
                })
            }
            let own = try mainGroupAsTheAppHasIt(entry)
            let lists = [["Ada"], ["Ada King"], [], ["Ada", "Bob"]]
            for names in lists {
                let text = compose(names)
                XCTAssertEqual(try mainGroupAsTheAppHasIt(text), own, "\(names): \(text)")
                let composed = try DesktopEntryDocument(parsing: text)
                for key in DesktopEntryExport.keysLaunchersCompare {
                    XCTAssertEqual(composed.value(of: key), source.value(of: key), "\(key) after \(names)")
                }
                XCTAssertEqual(composed.value(of: "Keywords"), source.value(of: "Keywords"), "Keywords as the app has them")
            }
            XCTAssertEqual(Set(lists.map(compose)).count, lists.count, "each list its own file")
            XCTAssertEqual(compose(["Ada"]), compose(["Ada"]), "the same list, the same bytes")
        }
    }

    func testParsingRefusesWhatIsNoDesktopEntry() {
        XCTAssertThrowsError(try DesktopEntryDocument(parsing: "Name=x\n[Desktop Entry]\n"))
        XCTAssertThrowsError(try DesktopEntryDocument(parsing: "[Something]\nName=x\n"))
        XCTAssertThrowsError(try DesktopEntryDocument(parsing: "# only a comment\n"))
        XCTAssertEqual(DesktopEntryList.split("a;b\\;c;;d"), ["a", "b;c", "d"])
    }

    func testActionIdentifiersAreStableSafeAndDistinct() {
        XCTAssertEqual(DesktopActionIdentifier.make(type: "SearchAction", contactIdentifier: nil), "qactd-SearchAction")
        XCTAssertEqual(DesktopActionIdentifier.make(type: "FavoriteAction", contactIdentifier: "ann"), "qactd-FavoriteAction-ann")
        var seen: Set<String> = []
        let inputs: [(String, String?)] = [
            ("com.example.search", nil), ("com-example-search", nil), ("FavoriteAction", "李雷"), ("FavoriteAction", "李"),
            ("FavoriteAction", "a b"), ("FavoriteAction", "a-b"), ("a", "b-c"), ("a-b", "c"), ("x", String(repeating: "y", count: 200)),
        ] + Self.hostileNames.map { ("FavoriteAction", $0) }
        for (type, contact) in inputs {
            let identifier = DesktopActionIdentifier.make(type: type, contactIdentifier: contact)
            XCTAssertTrue(identifier.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }, identifier)
            XCTAssertLessThanOrEqual(identifier.count, 6 + 40 + 17)
            XCTAssertEqual(identifier, DesktopActionIdentifier.make(type: type, contactIdentifier: contact), "stable")
            XCTAssertTrue(seen.insert(identifier).inserted, "\(type)/\(contact ?? "") collides: \(identifier)")
        }
        XCTAssertTrue(DesktopActionIdentifier.make(type: "FavoriteAction", contactIdentifier: "李雷").hasPrefix("qactd-FavoriteAction-"),
                      "a folded identifier keeps its readable part before the hash")
        XCTAssertEqual(DesktopActionIdentifier.unique("qactd-A", avoiding: ["qactd-A", "qactd-A-2"]), "qactd-A-3")
        XCTAssertEqual(DesktopActionIdentifier.unique("qactd-B", avoiding: ["qactd-A"]), "qactd-B")
    }

    /// Identifiers and file names made from a hash must not change from one version to the
    /// next (a launcher or a pin may hold them): FNV-1a's own test vectors, and one identifier.
    func testTheStableHashIsFNV1aOf64Bits() {
        XCTAssertEqual(StableHash.hex("".utf8), "cbf29ce484222325")
        XCTAssertEqual(StableHash.hex("a".utf8), "af63dc4c8601ec8c")
        XCTAssertEqual(StableHash.hex(Array("foobar".utf8)), "85944171f73967e8")
        XCTAssertEqual(
            DesktopActionIdentifier.make(type: "FavoriteAction", contactIdentifier: "a b"),
            "qactd-FavoriteAction-a-b-" + StableHash.hex("FavoriteAction\u{0}a b".utf8))
    }

    func testEverySystemIconTypeHasAName() {
        var names: Set<String> = []
        for type in SystemIconType.allCases {
            let name = FreedesktopIconName.name(for: type)
            XCTAssertFalse(name.isEmpty)
            XCTAssertTrue(name.allSatisfy { $0.isLowercase || $0 == "-" }, name)
            names.insert(name)
        }
        XCTAssertEqual(SystemIconType.allCases.count, 29)
        XCTAssertEqual(names.count, 29, "each type its own icon")
        XCTAssertEqual(FreedesktopIconName.icon(for: .system(.search), fallback: "app"), "system-search")
        XCTAssertEqual(FreedesktopIconName.icon(for: .symbol("star.fill"), fallback: "app"), "starred")
        XCTAssertEqual(FreedesktopIconName.icon(for: .symbol("tortoise.fill"), fallback: "app"), "app", "an unknown symbol: the app's icon")
        XCTAssertEqual(FreedesktopIconName.icon(for: .templateFile("/opt/app/icon.png"), fallback: "app"), "/opt/app/icon.png")
        XCTAssertEqual(FreedesktopIconName.icon(for: .templateFile("icon.png"), fallback: nil), nil)
        XCTAssertEqual(FreedesktopIconName.icon(for: nil, fallback: "app"), "app")
    }

    func testLocalesAndDesktopFileIDs() {
        XCTAssertEqual(DesktopEntryLocale.locale(forLanguage: "fr"), "fr")
        XCTAssertEqual(DesktopEntryLocale.locale(forLanguage: "pt_br"), "pt_BR")
        XCTAssertEqual(DesktopEntryLocale.locale(forLanguage: "pt-BR"), "pt_BR")
        XCTAssertEqual(DesktopEntryLocale.locale(forLanguage: "zh-Hans"), "zh_CN")
        XCTAssertNil(DesktopEntryLocale.locale(forLanguage: "base"))
        XCTAssertNil(DesktopEntryLocale.locale(forLanguage: "Base"))
        XCTAssertTrue(DesktopFileID.isValid("org.example.Contacts.desktop"))
        XCTAssertFalse(DesktopFileID.isValid(".desktop"))
        XCTAssertFalse(DesktopFileID.isValid("a/b.desktop"))
        XCTAssertFalse(DesktopFileID.isValid("app"))
        XCTAssertFalse(DesktopFileID.isValid(".hidden.desktop"))
        XCTAssertEqual(DesktopFileID.relativePaths(of: "app.desktop"), ["app.desktop"])
        XCTAssertEqual(Set(DesktopFileID.relativePaths(of: "kde-org-app.desktop")),
                       ["kde-org-app.desktop", "kde/org-app.desktop", "kde-org/app.desktop", "kde/org/app.desktop"])
        XCTAssertEqual(DesktopFileID.relativePaths(of: "kde-org-app.desktop").first, "kde-org-app.desktop", "the direct name first")
    }
}
