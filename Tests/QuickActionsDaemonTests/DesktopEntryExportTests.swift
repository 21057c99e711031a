import Contacts
import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import SystemCalls
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// The desktop-entry export driven through the core, with real files in a scratch
/// `XDG_DATA_HOME` and `XDG_DATA_DIRS`, and the real `desktop-file-validate`.
final class DesktopEntryExportTests: XCTestCase {
    private var folder = ""
    private var dataHome: String { folder + "/home-data" }
    private var systemData: String { folder + "/system-data" }
    private var exported: String { dataHome + "/applications/org.example.Contacts.desktop" }
    private var sourcePath: String { systemData + "/applications/org.example.Contacts.desktop" }
    private let qactl = "/opt/qactd tools/bin/qactl"

    static let sourceEntry = """
        [Desktop Entry]
        Type=Application
        Name=Contacts
        Name[de]=Kontakte
        Icon=x-office-address-book
        Exec=contacts %U
        Actions=new-window;

        [Desktop Action new-window]
        Name=New Window
        Exec=contacts --new-window

        """

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-export-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: systemData + "/applications", withIntermediateDirectories: true)
        try Self.sourceEntry.write(toFile: sourcePath, atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    private var environment: [String: String] {
        ["HOME": folder, "XDG_RUNTIME_DIR": folder, "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": systemData]
    }

    private func settings(_ configurationText: String, staticItems: [ShortcutItem] = [], localization: Localization = Localization()) throws -> DaemonSettings {
        let loaded = try ConfigurationLoader.parse(
            text: configurationText, file: folder + "/qactd.conf", environment: environment, userID: getuid())
        return DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems), localization: localization)
    }

    private func makeCore(_ settings: DaemonSettings) -> (DaemonCore, RecordingLogHandler.Store) {
        let (logger, records) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: settings, restored: nil, index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/run/qactd.sock", logger: logger, notifier: RecordingNotifier(),
            launchers: LauncherExporters(environment: environment, qactlPath: qactl, logger: logger))
        runEvents(of: core)
        return (core, records)
    }

    private func favorites(_ names: [String]) -> ContactsDirectoryUpdate {
        let changes = names.enumerated().map { number, name -> ContactIndexChange in
            .file(path: folder + "/contacts/\(number).vcf", result: .success([Contact(identifier: "id-\(number)-\(name)", name: name, favorite: true)]))
        }
        return ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching"))
    }

    private func exportedDocument() throws -> DesktopEntryDocument {
        try DesktopEntryDocument(parsing: String(contentsOfFile: exported, encoding: .utf8))
    }

    private func identity(_ path: String) -> (inode: ino_t, seconds: Int, nanoseconds: Int)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (info.st_ino, info.st_mtim.tv_sec, info.st_mtim.tv_nsec)
    }

    private let search = ShortcutItem(type: "SearchAction", title: "SEARCH_TITLE", icon: .system(.search))
    private let share = ShortcutItem(type: "ShareAction", title: "Share", icon: .system(.share))

    func testTheExportAppearsFollowsTheFavoritesAndIsNotRewrittenWhenUnchanged() async throws {
        let localization = Localization(tables: ["en": ["SEARCH_TITLE": "Search"], "fr": ["SEARCH_TITLE": "Rechercher"], "pt-BR": ["SEARCH_TITLE": "Pesquisar"]])
        let (core, _) = makeCore(try settings(
            "[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nDisplayLimit=3\n", staticItems: [search, share], localization: localization))
        await core.publishToLaunchers()
        await core.launcherExportsDone()

        var document = try exportedDocument()
        XCTAssertEqual(document.actionIdentifiers, ["new-window", "qactd-SearchAction", "qactd-ShareAction"], "before the first launch: static items only")
        XCTAssertEqual(document.value(of: "Name", in: "Desktop Action qactd-SearchAction"), "Search")
        XCTAssertEqual(document.value(of: "Name[fr]", in: "Desktop Action qactd-SearchAction"), "Rechercher")
        XCTAssertEqual(document.value(of: "Name[pt_BR]", in: "Desktop Action qactd-SearchAction"), "Pesquisar")
        XCTAssertEqual(document.value(of: "Icon", in: "Desktop Action qactd-SearchAction"), "system-search")
        XCTAssertEqual(document.value(of: "Exec", in: "Desktop Action qactd-SearchAction"),
                       "\"/opt/qactd tools/bin/qactl\" trigger --socket=\(folder)/run/qactd.sock --type=SearchAction")
        XCTAssertEqual(document.value(of: "Name[de]"), "Kontakte", "the app's own keys are kept")
        XCTAssertEqual(document.value(of: "X-Qactd-Source"), sourcePath)
        let exportStatus = await core.status().launchers.desktopEntry
        let status = try XCTUnwrap(exportStatus)
        XCTAssertEqual(status.path, exported)
        XCTAssertEqual(status.source, sourcePath)
        XCTAssertNil(status.problem)
        XCTAssertNotNil(status.written)

        // The app launches and resigns active with two favorites: the third row fits.
        await core.applyWatcherUpdate(favorites(["Ann", "Bob"]))
        await core.launcherExportsDone()
        let written = try XCTUnwrap(identity(exported))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        document = try exportedDocument()
        XCTAssertEqual(document.actionIdentifiers, ["new-window", "qactd-SearchAction", "qactd-ShareAction", "qactd-FavoriteAction-id-0-Ann"])
        XCTAssertEqual(document.value(of: "Name", in: "Desktop Action qactd-FavoriteAction-id-0-Ann"), "Ann")
        XCTAssertEqual(document.value(of: "Icon", in: "Desktop Action qactd-FavoriteAction-id-0-Ann"), "starred")
        XCTAssertTrue(document.value(of: "Exec", in: "Desktop Action qactd-FavoriteAction-id-0-Ann")?.hasSuffix("--type=FavoriteAction --contact=id-0-Ann") == true)
        let rewritten = try XCTUnwrap(identity(exported))
        XCTAssertNotEqual(rewritten.inode, written.inode, "replaced by a rename, not edited in place")

        // Nothing displayed changes: no write at all (same inode, same mtime).
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        await core.recordLifecycleMessage(appVersion: "1.0")
        await core.launcherExportsDone()
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        let unchanged = try XCTUnwrap(identity(exported))
        XCTAssertTrue(unchanged == rewritten, "an unchanged list writes nothing")

        // A reload re-checks the file but keeps it when its bytes are the same.
        try await core.reload(.success(try settings(
            "[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nDisplayLimit=3\n", staticItems: [search, share], localization: localization)))
        await core.launcherExportsDone()
        XCTAssertTrue(try XCTUnwrap(identity(exported)) == rewritten, "a reload with the same list writes nothing")
        try assertDesktopFileValid(exported)
    }

    func testAnIdentifierTheAppUsesItselfIsNotReused() async throws {
        let source = Self.sourceEntry.replacingOccurrences(of: "Actions=new-window;", with: "Actions=new-window;qactd-SearchAction;")
            + "\n[Desktop Action qactd-SearchAction]\nName=The app's own\nExec=contacts --search\n"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        let document = try exportedDocument()
        XCTAssertEqual(document.actionIdentifiers, ["new-window", "qactd-SearchAction", "qactd-SearchAction-2"])
        XCTAssertEqual(document.value(of: "Exec", in: "Desktop Action qactd-SearchAction"), "contacts --search", "the app's own action is kept")
        XCTAssertEqual(document.value(of: "Name", in: "Desktop Action qactd-SearchAction-2"), "SEARCH_TITLE")
        try assertDesktopFileValid(exported)
    }

    func testQuicklistModeExportsOnlyStaticItems() async throws {
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\nDynamicItems=quicklist\n", staticItems: [search]))
        await core.applyWatcherUpdate(favorites(["Ann"]))
        await core.launcherExportsDone()
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        let displayed = try await core.listing(all: false)
        XCTAssertEqual(displayed.items.count, 2, "List shows the favorite")
        XCTAssertEqual(try exportedDocument().actionIdentifiers, ["new-window", "qactd-SearchAction"], "the favorite is left to the quicklist")
    }

    func testAForeignFileIsLeftAloneAndNamedAndAReloadRetries() async throws {
        try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
        let foreign = "[Desktop Entry]\nType=Application\nName=Somebody else's\nExec=other\n"
        try foreign.write(toFile: exported, atomically: true, encoding: .utf8)
        let configuration = "[Launcher]\nDesktopFile=\(sourcePath)\n"
        let (core, records) = makeCore(try settings(configuration, staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        XCTAssertEqual(try String(contentsOfFile: exported, encoding: .utf8), foreign, "not overwritten")
        let reported = await core.status().launchers.desktopEntry?.problem
        let problem = try XCTUnwrap(reported)
        XCTAssertTrue(problem.contains(exported) && problem.contains("not written by qactd"), problem)
        XCTAssertTrue(records.messages.contains { $0.contains(exported) && $0.contains("not written by qactd") }, "logged")

        try FileManager.default.removeItem(atPath: exported)
        try await core.reload(.success(try settings(configuration, staticItems: [search])))
        await core.launcherExportsDone()
        XCTAssertEqual(try exportedDocument().actionIdentifiers, ["new-window", "qactd-SearchAction"], "exported once the file is gone")
        let problemAfterReload = await core.status().launchers.desktopEntry?.problem
        XCTAssertNil(problemAfterReload)
    }

    func testTheAppsOwnPerUserEntryIsTheForeignFileCase() async throws {
        try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
        try Self.sourceEntry.write(toFile: exported, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: sourcePath)
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        XCTAssertEqual(try String(contentsOfFile: exported, encoding: .utf8), Self.sourceEntry)
        let reported = await core.status().launchers.desktopEntry?.problem
        let problem = try XCTUnwrap(reported)
        XCTAssertTrue(problem.contains("the app's own entry"), problem)
    }

    func testEmptyingDesktopFileAndReloadingRemovesTheExport() async throws {
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported))
        try await core.reload(.success(try settings("", staticItems: [search])))
        await core.launcherExportsDone()
        XCTAssertFalse(FileManager.default.fileExists(atPath: exported), "removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: sourcePath), "the app's own entry stays")
        let exportAfterReload = await core.status().launchers.desktopEntry
        XCTAssertNil(exportAfterReload)
    }

    /// DesktopFile= emptied (or changed) while the daemon was stopped: the next daemon on the
    /// same socket removes what the previous one wrote, and nothing another daemon wrote.
    func testADaemonStartedWithoutDesktopFileRemovesItsPredecessorsExportOnly() async throws {
        let (first, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search]))
        await first.publishToLaunchers()
        await first.launcherExportsDone()
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported))
        let otherDaemons = dataHome + "/applications/org.example.Other.desktop"
        try String(contentsOfFile: exported, encoding: .utf8)
            .replacingOccurrences(of: "X-Qactd-Socket=\(folder)/run/qactd.sock", with: "X-Qactd-Socket=/run/user/1000/other.sock")
            .write(toFile: otherDaemons, atomically: true, encoding: .utf8)

        let (next, _) = makeCore(try settings("", staticItems: [search]))
        await next.publishToLaunchers()
        await next.launcherExportsDone()
        XCTAssertFalse(FileManager.default.fileExists(atPath: exported), "the previous run's export is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: otherDaemons), "another daemon's export stays")
        XCTAssertTrue(FileManager.default.fileExists(atPath: sourcePath))
    }

    func testLookupFollowsTheDataFoldersAndSubfolders() async throws {
        // kde-org.example.Contacts.desktop lives in applications/kde/ of the system folder.
        try FileManager.default.createDirectory(atPath: systemData + "/applications/kde", withIntermediateDirectories: true)
        try Self.sourceEntry.write(toFile: systemData + "/applications/kde/org.example.Contacts.desktop", atomically: true, encoding: .utf8)
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=kde-org.example.Contacts.desktop\n", staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        let exportStatus = await core.status().launchers.desktopEntry
        let status = try XCTUnwrap(exportStatus)
        XCTAssertEqual(status.source, systemData + "/applications/kde/org.example.Contacts.desktop")
        XCTAssertEqual(status.path, dataHome + "/applications/kde-org.example.Contacts.desktop")
        XCTAssertNil(status.problem)

        let (missing, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Missing.desktop\n", staticItems: [search]))
        await missing.publishToLaunchers()
        await missing.launcherExportsDone()
        let reported = await missing.status().launchers.desktopEntry?.problem
        let problem = try XCTUnwrap(reported)
        XCTAssertTrue(problem.contains("org.example.Missing.desktop") && problem.contains(systemData + "/applications/org.example.Missing.desktop"), problem)
    }

    func testBundleIdentifierDefaultsToTheDesktopFileID() throws {
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n").configuration.bundleIdentifier, "org.example.Contacts")
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=/opt/app/share/org.example.App.desktop\n").configuration.bundleIdentifier, "org.example.App")
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nBundleIdentifier=com.other\n").configuration.bundleIdentifier, "com.other")
        XCTAssertEqual(try settings("").configuration.bundleIdentifier, "", "neither set: types stay as written")
        XCTAssertThrowsError(try settings("[Launcher]\nDynamicItems=dock\n")) { error in
            XCTAssertEqual("\(error)", "\(folder)/qactd.conf:2: [Launcher] DynamicItems: \"dock\" is not one of \"desktop-entry\" or \"quicklist\"")
        }
        XCTAssertThrowsError(try settings("[Launcher]\nDesktopFile=Contacts\n")) { error in
            XCTAssertTrue("\(error)".contains("qactd.conf:2: [Launcher] DesktopFile: \"Contacts\" is not a desktop-file ID"), "\(error)")
        }
    }

    /// Contact names and identifiers built to break out of a value or an argument.
    func testHostileContactNamesAddNoKeyGroupOrArgumentAndTheFilePassesDesktopFileValidate() async throws {
        let hostile = [
            "Ann\n[Desktop Entry]\nExec=rm -rf ~", "Bob\nExec=/bin/sh -c 'touch /tmp/pwned'", "%u %f %% 100%",
            "\"Quoted\" 'single' `tick` $HOME", "semi;colon=equals", "back\\slash\\\\s\\n", "  spaced  ", "Émilie 👩‍💻 李雷",
        ]
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nDisplayLimit=20\n", staticItems: [search]))
        var changes = hostile.enumerated().map { number, name -> ContactIndexChange in
            .file(path: folder + "/contacts/\(number).vcf", result: .success([Contact(identifier: name + "-id", name: name, favorite: true)]))
        }
        // An identifier with a control character no escape can carry: listed, but not exported.
        changes.append(.file(path: folder + "/contacts/bell.vcf", result: .success([Contact(identifier: "zz-bell\u{7}", name: "Zz Bell", favorite: true)])))
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        await core.launcherExportsDone()
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        let document = try exportedDocument()
        XCTAssertEqual(document.groupNames.count, 2 + 1 + hostile.count, "one group per action, none injected")
        XCTAssertEqual(document.groupNames.filter { $0 == "Desktop Entry" }.count, 1)
        XCTAssertEqual(document.value(of: "Exec"), "contacts %U", "the app's own Exec")
        XCTAssertEqual(document.actionIdentifiers.count, 1 + 1 + hostile.count)
        let listing = try await core.listing(all: false)
        XCTAssertEqual(listing.items.count, 1 + hostile.count + 1, "List shows the bell contact")
        XCTAssertFalse(document.actionIdentifiers.contains { $0.contains("bell") }, "the bell contact is not exported")
        for (row, identifier) in zip(listing.items.dropFirst().filter { $0.item.contactIdentifier != "zz-bell\u{7}" }, document.actionIdentifiers.dropFirst(2)) {
            let group = "Desktop Action \(identifier)"
            XCTAssertEqual(DesktopEntryEscaping.unescapedValue(try XCTUnwrap(document.value(of: "Name", in: group))), row.item.title)
            let exec = DesktopEntryEscaping.unescapedValue(try XCTUnwrap(document.value(of: "Exec", in: group)))
            XCTAssertEqual(
                DesktopEntryExecReader.split(exec),
                [qactl, "trigger", "--socket=\(folder)/run/qactd.sock", "--type=FavoriteAction", "--contact=\(row.item.contactIdentifier ?? "")"],
                "exactly five arguments for \(row.item.title.debugDescription)")
        }
        try assertDesktopFileValid(exported)
    }

    /// Where no file was, a file that appears before the rename is not replaced (RENAME_NOREPLACE).
    func testAReplacementMeantForNoFileRefusesOneThatAppeared() throws {
        let path = folder + "/appeared.desktop"
        try "someone else's\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try FileIO.replaceAtomically(path, with: [Array("ours\n".utf8)], mode: 0o644, replacing: false)) { error in
            XCTAssertEqual((error as? AtomicReplaceError)?.error.errno, EEXIST)
            XCTAssertEqual((error as? AtomicReplaceError)?.step, .rename)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "someone else's\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }, [], "no temporary file left")
        try FileIO.replaceAtomically(path, with: [Array("ours\n".utf8)], mode: 0o644)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "ours\n")
    }

    /// `make demo` ships this entry; it and its export must pass the validator too.
    func testTheDemoEntryAndItsExportAreValid() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let demo = repository.appendingPathComponent("etc/qactd/io.qactd.Demo.desktop").path
        try assertDesktopFileValid(demo)
        let (core, _) = makeCore(try settings(
            "[Launcher]\nDesktopFile=\(demo)\n", staticItems: [search, share],
            localization: Localization(tables: ["fr": ["SEARCH_TITLE": "Rechercher"]])))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        let exportedDemo = dataHome + "/applications/io.qactd.Demo.desktop"
        let document = try DesktopEntryDocument(parsing: String(contentsOfFile: exportedDemo, encoding: .utf8))
        XCTAssertEqual(document.actionIdentifiers, ["qactd-SearchAction", "qactd-ShareAction"])
        XCTAssertEqual(document.value(of: "Name[fr]", in: "Desktop Action qactd-SearchAction"), "Rechercher")
        try assertDesktopFileValid(exportedDemo)
    }
}
