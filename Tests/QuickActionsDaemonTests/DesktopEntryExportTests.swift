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
/// `XDG_DATA_HOME` and `XDG_DATA_DIRS` (qactd's exports folder first, as its environment
/// generator puts it), and the real `desktop-file-validate`.
final class DesktopEntryExportTests: XCTestCase {
    private var folder = ""
    private var dataHome: String { folder + "/home-data" }
    private var systemData: String { folder + "/system-data" }
    private var exportsShare: String { dataHome + "/qactd/exports/share" }
    private var exported: String { exportsShare + "/applications/org.example.Contacts.desktop" }
    /// The person's own entry for the app, in their own applications folder.
    private var personal: String { dataHome + "/applications/org.example.Contacts.desktop" }
    private var sourcePath: String { systemData + "/applications/org.example.Contacts.desktop" }
    /// The `qactl` the exported lines run: a path with a space (so the quoting of the program is
    /// read too), where `GLibLaunchOracle` puts its recorder.
    private var qactl: String { folder + "/qactd tools/bin/qactl" }

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
        ["HOME": folder, "XDG_RUNTIME_DIR": folder, "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": exportsShare + ":" + systemData]
    }

    private func settings(_ configurationText: String, staticItems: [ShortcutItem] = [], localization: Localization = Localization()) throws -> DaemonSettings {
        let loaded = try ConfigurationLoader.parse(
            text: resigningActiveUnlessSaid(configurationText), file: folder + "/qactd.conf", environment: environment, userID: getuid())
        return DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems), localization: localization)
    }

    private func makeCore(_ settings: DaemonSettings, environment: [String: String]? = nil) -> (DaemonCore, RecordingLogHandler.Store) {
        let (logger, records) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: settings, restored: nil, index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/run/qactd.sock", logger: logger, notifier: RecordingNotifier(),
            launchers: LauncherExporters(environment: environment ?? self.environment, qactlPath: qactl, logger: logger))
        runEvents(of: core)
        return (core, records)
    }

    /// A core on `configurationText` that has published once and whose export is done, as a
    /// daemon is once started.
    private func startedCore(_ configurationText: String) async throws -> (DaemonCore, RecordingLogHandler.Store) {
        let (core, records) = makeCore(try settings(configurationText, staticItems: [search]))
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        return (core, records)
    }

    private func favorites(_ names: [String]) -> ContactsDirectoryUpdate {
        let changes = names.enumerated().map { number, name -> ContactIndexChange in
            .file(path: folder + "/contacts/\(number).vcf", result: .success([Contact(identifier: "id-\(number)-\(name)", name: name, favorite: true)]))
        }
        return ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching"))
    }

    /// Each card (by file stem) written into `contacts` and handed to the core parsed, as a favorite.
    private func favoriteCards(_ cards: [String: String], in contacts: String) throws -> ContactsDirectoryUpdate {
        let changes = try cards.map { name, card -> ContactIndexChange in
            let path = contacts + "/\(name).vcf"
            try card.write(toFile: path, atomically: true, encoding: .utf8)
            let parsed = try VCardParser.parse(Array(card.utf8), fileStem: name).map { contact -> Contact in
                var favorite = contact
                favorite.favorite = true
                return favorite
            }
            return .file(path: path, result: .success(parsed))
        }
        return ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching"))
    }

    /// `text`, a file this daemon wrote, as a daemon on another socket would have written it.
    private func writeAsAnotherDaemons(_ text: String, to path: String) throws {
        try text.replacingOccurrences(of: "X-Qactd-Socket=\(folder)/run/qactd.sock", with: "X-Qactd-Socket=/run/user/1000/other.sock")
            .write(toFile: path, atomically: true, encoding: .utf8)
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
                       "\"\(folder)/qactd tools/bin/qactl\" trigger --socket=\(folder)/run/qactd.sock --type=SearchAction")
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
        // Faces are on by default: Ann's icon is her face, her monogram since she has no card.
        let annFace = try XCTUnwrap(document.value(of: "Icon", in: "Desktop Action qactd-FavoriteAction-id-0-Ann"))
        XCTAssertTrue(annFace.hasPrefix(dataHome + "/qactd/faces/org.example.Contacts.desktop/face-") && annFace.hasSuffix(".svg"), annFace)
        XCTAssertTrue(try String(contentsOfFile: annFace, encoding: .utf8).contains(">A</text>"), annFace)
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

    /// `FavoriteFaces=yes`: each favorite's action has its face as its icon, a file in qactd's
    /// faces folder: the photo its card embeds, cut round (a PNG); a monogram for one without a photo and
    /// for one whose photo is no image (logged once, however often the set is exported); a pinned
    /// favorite's launcher has it too. A face no longer shown is removed, and every face when the
    /// setting is turned off.
    func testFavoritesActionsAndPinnedLaunchersShowTheirFacesWhichGoWithTheContact() async throws {
        let contacts = folder + "/contacts"
        try FileManager.default.createDirectory(atPath: contacts, withIntermediateDirectories: true)
        // A real PNG photo, 64 × 48, one colour.
        let png = try TestPhoto.png(width: 64, height: 48, rgb: [0xE0, 0x1B, 0x24])
        let cards = [
            "grace": "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace Hopper\nPHOTO;ENCODING=b;TYPE=PNG:\(Data(png).base64EncodedString())\nEND:VCARD\n",
            "ada": "BEGIN:VCARD\nVERSION:3.0\nUID:ada\nFN:Ada Lovelace\nEND:VCARD\n",
            "bob": "BEGIN:VCARD\nVERSION:4.0\nUID:bob\nFN:Bob Broken\nPHOTO:data:image/jpeg;base64,\(Data("not a picture".utf8).base64EncodedString())\nEND:VCARD\n",
        ]
        let configuration = "[Launcher]\nDesktopFile=org.example.Contacts.desktop\nFavoriteFaces=yes\n[Shortcuts]\nDisplayLimit=4\n"
        let (core, records) = makeCore(try settings(configuration, staticItems: [search]))
        await core.applyWatcherUpdate(try favoriteCards(cards, in: contacts))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()

        let document = try exportedDocument()
        func icon(_ contact: String) -> String? { document.value(of: "Icon", in: "Desktop Action qactd-FavoriteAction-\(contact)") }
        let faces = dataHome + "/qactd/faces/org.example.Contacts.desktop"
        let graceFace = try XCTUnwrap(icon("grace"), document.actionIdentifiers.description)
        XCTAssertTrue(graceFace.hasPrefix(faces + "/face-") && graceFace.hasSuffix(".png"), graceFace)
        let grace = try TestPhoto.middleAndCorner(ofFace: graceFace)
        XCTAssertEqual(grace.middle, [0xE0, 0x1B, 0x24, 255], "the photo's colour in the middle")
        XCTAssertEqual(grace.corner[3], 0, "cut round: the corner is transparent")
        let adaSVG = try String(contentsOfFile: try XCTUnwrap(icon("ada")), encoding: .utf8)
        XCTAssertTrue(adaSVG.contains(">AL</text>") && adaSVG.contains(ContactFace.colour(for: "ada")), adaSVG)
        let bobFace = try XCTUnwrap(icon("bob"))
        let bobSVG = try String(contentsOfFile: bobFace, encoding: .utf8)
        XCTAssertTrue(bobSVG.contains(">BB</text>") && bobFace.hasSuffix(".svg"), "a broken photo gives the monogram: \(bobSVG)")
        XCTAssertEqual(document.value(of: "Icon", in: "Desktop Action qactd-SearchAction"), "system-search", "static items keep their icons")

        // Pinned, Grace's launcher shows her face too.
        _ = try await core.pin(.type("FavoriteAction", contactIdentifier: "grace"))
        await core.launcherExportsDone()
        let pins = try FileManager.default.contentsOfDirectory(atPath: exportsShare + "/applications").filter { $0.contains(PinnedDesktopEntry.infix) }
        let pinned = try DesktopEntryDocument(parsing: String(contentsOfFile: exportsShare + "/applications/" + XCTUnwrap(pins.first), encoding: .utf8))
        XCTAssertEqual(pinned.value(of: "Icon"), graceFace)

        // Exported again (a new favorite): Bob's photo was said once.
        await core.applyWatcherUpdate(favorites(["Zed"]))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        XCTAssertEqual(records.messages.filter { $0.contains("The photo of contact 'bob' is not used") }.count, 1, records.messages.description)

        // Ada removed: her face goes; Grace's stays while her pin shows it.
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(
            changes: [.file(path: contacts + "/ada.vcf", result: .success([]))], work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(icon("ada"))), "removed with the contact")
        XCTAssertTrue(FileManager.default.fileExists(atPath: graceFace))

        // Turned off: the configured icon again, and no face is left.
        try await core.reload(.success(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\nFavoriteFaces=no\n[Shortcuts]\nDisplayLimit=4\n", staticItems: [search])))
        await core.launcherExportsDone()
        XCTAssertEqual(try exportedDocument().value(of: "Icon", in: "Desktop Action qactd-FavoriteAction-grace"), "starred")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: faces), [])
    }

    /// A face is made again only from a card, or a photo file, that changed since: exported
    /// again with Grace's card rewritten (a new photo) and Ada's photo file rewritten, each shows
    /// the new photo; Bob's face, whose card did not change, stays the same file.
    func testAFaceIsMadeAgainWhenItsCardOrPhotoFileChanges() async throws {
        let contacts = folder + "/contacts"
        try FileManager.default.createDirectory(atPath: contacts, withIntermediateDirectories: true)
        // Real PNG photos, each of its own colour (the red channel).
        func png(width: UInt8) throws -> [UInt8] {
            try TestPhoto.png(width: Int(width), height: 48, rgb: [width, 0x40, 0x80])
        }
        let adaPhoto = folder + "/ada.png"
        try Data(png(width: 20)).write(to: URL(fileURLWithPath: adaPhoto))
        func grace(_ photo: [UInt8]) -> String {
            "BEGIN:VCARD\nVERSION:3.0\nUID:grace\nFN:Grace Hopper\nPHOTO;ENCODING=b;TYPE=PNG:\(Data(photo).base64EncodedString())\nEND:VCARD\n"
        }
        let (core, _) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nDisplayLimit=5\n", staticItems: [search]))
        await core.applyWatcherUpdate(try favoriteCards([
            "grace": grace(png(width: 64)),
            "ada": "BEGIN:VCARD\nVERSION:4.0\nUID:ada\nFN:Ada Lovelace\nPHOTO:file://\(adaPhoto)\nEND:VCARD\n",
            "bob": "BEGIN:VCARD\nVERSION:3.0\nUID:bob\nFN:Bob\nEND:VCARD\n",
        ], in: contacts))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        func icons() throws -> [String: String] {
            let document = try exportedDocument()
            return ["grace", "ada", "bob"].reduce(into: [:]) { icons, contact in
                icons[contact] = document.value(of: "Icon", in: "Desktop Action qactd-FavoriteAction-\(contact)")
            }
        }
        /// The photo's colour in the face's middle: its red, the photo's width.
        func photoWidth(_ path: String?) throws -> UInt8 { try TestPhoto.middleAndCorner(ofFace: try XCTUnwrap(path)).middle[0] }
        let before = try icons()
        XCTAssertEqual(try photoWidth(before["grace"]), 64)
        XCTAssertEqual(try photoWidth(before["ada"]), 20)

        // Grace's card rewritten with a new photo, Ada's photo file rewritten (her card is not),
        // and a new favorite, so the set is exported again.
        try Data(png(width: 30)).write(to: URL(fileURLWithPath: adaPhoto))
        await core.applyWatcherUpdate(try favoriteCards(["grace": grace(png(width: 99)), "zed": "BEGIN:VCARD\nVERSION:3.0\nUID:zed\nFN:Zed\nEND:VCARD\n"], in: contacts))
        _ = await core.resignActive(appVersion: "1.0")
        await core.launcherExportsDone()
        let after = try icons()
        XCTAssertNotEqual(after["grace"], before["grace"])
        XCTAssertEqual(try photoWidth(after["grace"]), 99)
        XCTAssertNotEqual(after["ada"], before["ada"])
        XCTAssertEqual(try photoWidth(after["ada"]), 30)
        XCTAssertEqual(after["bob"], before["bob"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: try XCTUnwrap(before["grace"])), "the old face is removed")
    }

    func testAnIdentifierTheAppUsesItselfIsNotReused() async throws {
        let source = Self.sourceEntry.replacingOccurrences(of: "Actions=new-window;", with: "Actions=new-window;qactd-SearchAction;")
            + "\n[Desktop Action qactd-SearchAction]\nName=The app's own\nExec=contacts --search\n"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        _ = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
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
        try FileManager.default.createDirectory(atPath: exportsShare + "/applications", withIntermediateDirectories: true)
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

    /// The person's own entry under the app's ID in `$XDG_DATA_HOME/applications` comes before
    /// every data folder: qactd never overwrites it, exports nothing (which launchers would not
    /// see), says why and how to fix it, and exports as soon as it is moved away.
    func testThePersonsOwnEntryIsNeverOverwrittenAndNothingIsExportedWhileItIsThere() async throws {
        let (core, records) = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported))

        try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
        let own = Self.sourceEntry.replacingOccurrences(of: "Name=Contacts", with: "Name=My Contacts")
        try own.write(toFile: personal, atomically: true, encoding: .utf8)
        let hidden = await waitUntil(timeout: 2) { !FileManager.default.fileExists(atPath: self.exported) }
        XCTAssertTrue(hidden, "the export goes while the person's own entry is in front of it")
        XCTAssertEqual(try String(contentsOfFile: personal, encoding: .utf8), own, "never overwritten")
        _ = await waitUntil(timeout: 2) { await core.status().launchers.desktopEntry?.problem != nil }
        let reported = await core.status().launchers.desktopEntry?.problem
        let problem = try XCTUnwrap(reported)
        XCTAssertTrue(problem.contains(personal) && problem.contains("your own entry") && problem.contains("move it out"), problem)
        XCTAssertTrue(records.messages.contains { $0.contains(personal) && $0.contains("your own entry") }, "logged")

        // A reload with the entry there writes nothing either.
        try await core.reload(.success(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search])))
        await core.launcherExportsDone()
        XCTAssertFalse(FileManager.default.fileExists(atPath: exported))
        XCTAssertEqual(try String(contentsOfFile: personal, encoding: .utf8), own)

        // Moved away: exported again, with no reload.
        try FileManager.default.moveItem(atPath: personal, toPath: folder + "/my-contacts.desktop")
        let back = await waitUntil(timeout: 2) { FileManager.default.fileExists(atPath: self.exported) }
        XCTAssertTrue(back, "exported once the person's entry is gone")
        let cleared = await waitUntil(timeout: 2) { await core.status().launchers.desktopEntry?.problem == nil }
        XCTAssertTrue(cleared)
    }

    /// The export follows the app's own entry: an upgrade that changes `Exec`, `Icon`, `Name`,
    /// `MimeType` and translations is reflected within 2 s; the entry removed (the app
    /// uninstalled), the export goes within 2 s; back with the entry.
    func testTheExportFollowsTheAppsEntryThroughAnUpgradeARemovalAndAReinstall() async throws {
        let (core, _) = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        XCTAssertEqual(try exportedDocument().value(of: "Icon"), "x-office-address-book")

        // The upgrade writes a temporary file and renames it over the entry, as dpkg does.
        let upgraded = Self.sourceEntry
            .replacingOccurrences(of: "Exec=contacts %U", with: "Exec=contacts2 --new %U")
            .replacingOccurrences(of: "Icon=x-office-address-book", with: "Icon=org.example.Contacts2")
            .replacingOccurrences(of: "Name[de]=Kontakte", with: "Name[de]=Adressbuch\nName[fr]=Contacts")
            .replacingOccurrences(of: "Name=Contacts\n", with: "Name=Contacts 2\nMimeType=text/vcard;\n")
        try upgraded.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let followed = await waitUntil(timeout: 2) {
            guard let document = try? self.exportedDocument() else { return false }
            return document.value(of: "Icon") == "org.example.Contacts2"
        }
        XCTAssertTrue(followed, "the upgrade is followed within 2 s")
        let document = try exportedDocument()
        XCTAssertEqual(document.value(of: "Exec"), "contacts2 --new %U", "the app's own new Exec, as it wrote it")
        XCTAssertEqual(document.value(of: "Name"), "Contacts 2")
        XCTAssertEqual(document.value(of: "Name[de]"), "Adressbuch")
        XCTAssertEqual(document.value(of: "Name[fr]"), "Contacts")
        XCTAssertEqual(document.value(of: "MimeType"), "text/vcard;")
        XCTAssertEqual(document.actionIdentifiers, ["new-window", "qactd-SearchAction"], "the quick actions stay")
        try assertDesktopFileValid(exported)

        // Edited in place (a close after writing) is followed too.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: sourcePath))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(upgraded.replacingOccurrences(of: "Name=Contacts 2", with: "Name=Contacts 3").utf8))
        try handle.close()
        let edited = await waitUntil(timeout: 2) { (try? self.exportedDocument())?.value(of: "Name") == "Contacts 3" }
        XCTAssertTrue(edited, "an edit in place is followed within 2 s")

        // Uninstalled: the exported copy goes, and Status says why.
        try FileManager.default.removeItem(atPath: sourcePath)
        let removed = await waitUntil(timeout: 2) { !FileManager.default.fileExists(atPath: self.exported) }
        XCTAssertTrue(removed, "no ghost launcher once the app is gone")
        let reported = await waitUntil(timeout: 2) { await core.status().launchers.desktopEntry?.problem?.contains("was not found") == true }
        XCTAssertTrue(reported, "Status says why")

        // Reinstalled, with its whole folder: back within 2 s.
        try FileManager.default.removeItem(atPath: systemData + "/applications")
        try FileManager.default.createDirectory(atPath: systemData + "/applications", withIntermediateDirectories: true)
        try Self.sourceEntry.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let reinstalled = await waitUntil(timeout: 2) { (try? self.exportedDocument())?.value(of: "Icon") == "x-office-address-book" }
        XCTAssertTrue(reinstalled, "the export comes back with the app's entry")
        let cleared = await waitUntil(timeout: 2) { await core.status().launchers.desktopEntry?.problem == nil }
        XCTAssertTrue(cleared)
    }

    /// Launchers see the exports only once the folder is on `XDG_DATA_DIRS` (the environment
    /// generator adds it at login): until then `Status` and the journal say so.
    func testAnExportsFolderMissingFromXDGDataDirsIsReported() async throws {
        var environment = self.environment
        environment["XDG_DATA_DIRS"] = systemData
        let (core, records) = makeCore(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n", staticItems: [search]), environment: environment)
        await core.publishToLaunchers()
        await core.launcherExportsDone()
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported), "written all the same, for the next login")
        let reported = await core.status().launchers.desktopEntry
        let notice = try XCTUnwrap(reported?.notice)
        XCTAssertTrue(notice.contains(exportsShare) && notice.contains("XDG_DATA_DIRS") && notice.contains("log out"), notice)
        XCTAssertNil(reported?.problem)
        XCTAssertTrue(records.messages.contains { $0.contains(exportsShare) && $0.contains("not on XDG_DATA_DIRS") })

        let (onPath, _) = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        let fine = await onPath.status().launchers.desktopEntry
        XCTAssertNil(fine?.notice)
    }

    /// An older qactd wrote into the person's own applications folder, where its copy shadowed the
    /// app's entry and outlived the package: the files it can prove it wrote (they name its socket)
    /// go at start-up; the person's files and another daemon's stay.
    func testFilesAnOlderVersionLeftInThePersonsFolderGo() async throws {
        _ = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        try FileManager.default.createDirectory(atPath: dataHome + "/applications", withIntermediateDirectories: true)
        let ours = try String(contentsOfFile: exported, encoding: .utf8)
        try ours.write(toFile: personal, atomically: true, encoding: .utf8)
        let otherDaemons = dataHome + "/applications/org.example.Other.desktop"
        try writeAsAnotherDaemons(ours, to: otherDaemons)
        let persons = dataHome + "/applications/org.example.Notes.desktop"
        try "[Desktop Entry]\nType=Application\nName=Notes\nExec=notes\n".write(toFile: persons, atomically: true, encoding: .utf8)

        let (upgraded, _) = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: personal), "the older version's copy goes")
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported), "the export is in the exports folder")
        XCTAssertTrue(FileManager.default.fileExists(atPath: otherDaemons))
        XCTAssertTrue(FileManager.default.fileExists(atPath: persons))
        let problem = await upgraded.status().launchers.desktopEntry?.problem
        XCTAssertNil(problem, "an older version's copy is no entry of the person's")
    }

    func testEmptyingDesktopFileAndReloadingRemovesTheExport() async throws {
        let (core, _) = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
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
        _ = try await startedCore("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n")
        XCTAssertTrue(FileManager.default.fileExists(atPath: exported))
        let otherDaemons = exportsShare + "/applications/org.example.Other.desktop"
        try writeAsAnotherDaemons(String(contentsOfFile: exported, encoding: .utf8), to: otherDaemons)

        _ = try await startedCore("")
        XCTAssertFalse(FileManager.default.fileExists(atPath: exported), "the previous run's export is removed")
        XCTAssertTrue(FileManager.default.fileExists(atPath: otherDaemons), "another daemon's export stays")
        XCTAssertTrue(FileManager.default.fileExists(atPath: sourcePath))
    }

    func testLookupFollowsTheDataFoldersAndSubfolders() async throws {
        // kde-org.example.Contacts.desktop lives in applications/kde/ of the system folder.
        try FileManager.default.createDirectory(atPath: systemData + "/applications/kde", withIntermediateDirectories: true)
        try Self.sourceEntry.write(toFile: systemData + "/applications/kde/org.example.Contacts.desktop", atomically: true, encoding: .utf8)
        let (core, _) = try await startedCore("[Launcher]\nDesktopFile=kde-org.example.Contacts.desktop\n")
        let exportStatus = await core.status().launchers.desktopEntry
        let status = try XCTUnwrap(exportStatus)
        XCTAssertEqual(status.source, systemData + "/applications/kde/org.example.Contacts.desktop")
        XCTAssertEqual(status.path, exportsShare + "/applications/kde-org.example.Contacts.desktop")
        XCTAssertNil(status.problem)

        let (missing, _) = try await startedCore("[Launcher]\nDesktopFile=org.example.Missing.desktop\n")
        let reported = await missing.status().launchers.desktopEntry?.problem
        let problem = try XCTUnwrap(reported)
        XCTAssertTrue(problem.contains("org.example.Missing.desktop") && problem.contains(systemData + "/applications/org.example.Missing.desktop"), problem)
    }

    /// Which folders are watched for the app's entry: its own folder and name where it exists,
    /// else the nearest existing ancestor and the next name down; the exports folder is never
    /// searched.
    func testTheWatchedFoldersAreTheNearestExistingOnesAndTheExportsAreNeverSearched() throws {
        let existing: Set<String> = ["/h/.local/share", "/usr/share/applications", "/usr/share/applications/kde", "/opt"]
        XCTAssertEqual(
            ExportFolders.watchedFolders(for: [
                "/h/.local/share/applications/kde-a.desktop", "/h/.local/share/applications/kde/a.desktop",
                "/usr/share/applications/kde-a.desktop", "/usr/share/applications/kde/a.desktop", "/opt/x/y/a.desktop",
            ], isFolder: existing.contains),
            ["/h/.local/share": ["applications"], "/usr/share/applications": ["kde-a.desktop"], "/usr/share/applications/kde": ["a.desktop"], "/opt": ["x"]])
        let folders = try XCTUnwrap(ExportFolders(environment: ["HOME": "/h", "XDG_DATA_DIRS": "/h/.local/share/qactd/exports/share/:/usr/share"]))
        XCTAssertTrue(folders.exportsAreOnDataDirectories)
        XCTAssertEqual(folders.appDataDirectories, ["/usr/share"])
        XCTAssertEqual(folders.candidates(for: "a.desktop").personal, ["/h/.local/share/applications/a.desktop"])
        XCTAssertEqual(folders.candidates(for: "a.desktop").data, ["/usr/share/applications/a.desktop"])
        XCTAssertEqual(folders.exports, "/h/.local/share/qactd/exports/share/applications")
        XCTAssertFalse(try XCTUnwrap(ExportFolders(environment: ["HOME": "/h"])).exportsAreOnDataDirectories)
        XCTAssertNil(ExportFolders(environment: [:]))
    }

    func testBundleIdentifierDefaultsToTheDesktopFileID() throws {
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n").configuration.bundleIdentifier, "org.example.Contacts")
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=/opt/app/share/org.example.App.desktop\n").configuration.bundleIdentifier, "org.example.App")
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=org.example.Contacts.desktop\n[Shortcuts]\nBundleIdentifier=com.other\n").configuration.bundleIdentifier, "com.other")
        XCTAssertEqual(try settings("[Launcher]\nDesktopFile=none\n").configuration.bundleIdentifier, "", "neither set: types stay as written")
        XCTAssertThrowsError(try settings("[Launcher]\nDynamicItems=dock\n")) { error in
            XCTAssertEqual("\(error)", "\(folder)/qactd.conf:2: [Launcher] DynamicItems: \"dock\" is not one of \"auto\", \"desktop-entry\" or \"quicklist\"")
        }
        XCTAssertThrowsError(try settings("[Launcher]\nDesktopFile=Contacts\n")) { error in
            XCTAssertTrue("\(error)".contains("qactd.conf:2: [Launcher] DesktopFile: \"Contacts\" is not auto, none, a desktop-file ID"), "\(error)")
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
        // Each action launched by GLib runs the recorder with exactly the four arguments.
        let oracle = try GLibLaunchOracle(folder: folder, programsOnPath: ["contacts"])
        var launches: [String] = [], expected: [[String]] = []
        for (row, identifier) in zip(listing.items.dropFirst().filter { $0.item.contactIdentifier != "zz-bell\u{7}" }, document.actionIdentifiers.dropFirst(2)) {
            let group = "Desktop Action \(identifier)"
            XCTAssertEqual(DesktopEntryEscaping.unescapedValue(try XCTUnwrap(document.value(of: "Name", in: group))), row.item.title)
            launches.append(identifier)
            expected.append(["trigger", "--socket=\(folder)/run/qactd.sock", "--type=FavoriteAction", "--contact=\(row.item.contactIdentifier ?? "")"])
        }
        XCTAssertEqual(launches.count, hostile.count)
        XCTAssertEqual(try oracle.arguments(desktopFile: exported, launches: launches), expected)
        try assertDesktopFileValid(exported)
    }

    /// Where no file was, a file that appears before the rename is not replaced (RENAME_NOREPLACE).
    func testAReplacementMeantForNoFileRefusesOneThatAppeared() throws {
        let path = folder + "/appeared.desktop"
        try "someone else's\n".write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try FileIO.replaceAtomically(path, with: Array("ours\n".utf8), mode: 0o644, replacing: false)) { error in
            XCTAssertEqual((error as? AtomicReplaceError)?.error.errno, EEXIST)
            XCTAssertEqual((error as? AtomicReplaceError)?.step, .rename)
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "someone else's\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains(".tmp-") }, [], "no temporary file left")
        try FileIO.replaceAtomically(path, with: Array("ours\n".utf8), mode: 0o644)
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
        let exportedDemo = exportsShare + "/applications/io.qactd.Demo.desktop"
        let document = try DesktopEntryDocument(parsing: String(contentsOfFile: exportedDemo, encoding: .utf8))
        XCTAssertEqual(document.actionIdentifiers, ["qactd-SearchAction", "qactd-ShareAction"])
        XCTAssertEqual(document.value(of: "Name[fr]", in: "Desktop Action qactd-SearchAction"), "Rechercher")
        try assertDesktopFileValid(exportedDemo)
    }
}
