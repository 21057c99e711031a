import Contacts
import Foundation
import Glibc
import Logging
import QuickActions
import QuickActionsProtocol
import TestSupport
import XCTest

@testable import QuickActionsDaemon

/// `[Actions]` in the core, driven directly: a command takes the place of the app and of the
/// pending launch item, a refusal changes nothing, and the command's end comes back as an event.
final class DaemonCoreActionsTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder("core-actions")
    }

    private func makeCore(_ configuration: String, staticItems: [ShortcutItem] = []) throws -> (DaemonCore, RecordingLogHandler.Store) {
        let loaded = try ConfigurationLoader.parse(
            text: resigningActiveUnlessSaid(configuration), file: folder + "/qactd.conf", environment: ["HOME": folder, "XDG_RUNTIME_DIR": folder], userID: getuid())
        let (logger, records) = Logger.recording(level: .debug)
        let core = DaemonCore(
            settings: DaemonSettings(configuration: loaded.configuration, staticItems: StaticItemsFile(items: staticItems)), restored: nil,
            index: ContactIndex(), store: StateStore(paths: StatePaths(directory: folder + "/state")),
            socketPath: folder + "/run/qactd.sock", logger: logger, notifier: RecordingNotifier(),
            launchers: LauncherExporters(environment: ["HOME": folder], qactlPath: nil, logger: logger))
        runEvents(of: core)
        return (core, records)
    }

    private func favorites(_ core: DaemonCore, _ contacts: [(Contact, String)]) async {
        let changes = contacts.map { ContactIndexChange.file(path: folder + "/contacts/" + $0.1, result: .success([$0.0])) }
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        _ = await core.resignActive(appVersion: "1.0")
    }

    private func assertEventually(_ condition: () -> Bool, _ message: @autoclosure () -> String = "", line: UInt = #line) async {
        let held = await waitUntil(timeout: 10) { condition() }
        XCTAssertTrue(held, message(), line: line)
    }

    func testACommandDeliversTheItemWithoutTouchingThePendingLaunchItem() async throws {
        let out = folder + "/out"
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/sh -c 'printf %s \"$1|$QACTD_CONTACT_FILE\" > \(out)' sh {email}\n")
        let ada = Contact(identifier: "ada", name: "Ada", email: "ada@x.example", emails: ["ada@x.example"], favorite: true)
        await favorites(core, [(ada, "ada.vcf")])
        let outcome = try await core.trigger(.type("FavoriteAction", contactIdentifier: "ada"))
        XCTAssertEqual(outcome.resolution.delivery, .command)
        guard case .command(let command) = outcome.delivery else { return XCTFail("\(outcome.delivery)") }
        XCTAssertEqual(command.program, "/bin/sh")
        XCTAssertNotNil(command.place?.pid)
        let status = await core.status()
        XCTAssertNil(status.pendingLaunchItem)
        XCTAssertEqual(status.usage["FavoriteAction/ada"], 1)
        await assertEventually({ records.messages.contains { $0.contains("of 'FavoriteAction'") && $0.contains("exited with status 0") } })
        XCTAssertEqual(try String(contentsOfFile: out, encoding: .utf8), "ada@x.example|" + folder + "/contacts/ada.vcf")
    }

    func testARefusedCommandCountsNothingAndRunsNothing() async throws {
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/touch \(folder)/ran {name}\n")
        await favorites(core, [(Contact(identifier: "dash", name: "-rf", favorite: true), "dash.json")])
        do {
            _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "dash"))
            XCTFail("refused")
        } catch {
            XCTAssertEqual(error, .commandRefused(CommandTemplateExpansionError.leadingDash(field: .name, argument: "-rf").description))
        }
        let status = await core.status()
        XCTAssertEqual(status.usage, [:])
        XCTAssertTrue(records.messages.contains { $0.hasPrefix("Notice for the desktop: “-rf” did not work") }, "\(records.messages)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder + "/ran"))
    }

    /// A JSON contact has no vCard of its own: `{file}` is a private copy beside the socket.
    func testAJSONContactsFileIsAPrivateCopy() async throws {
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/cp {file} \(folder)/copied.vcf\n")
        await favorites(core, [(Contact(identifier: "m;h", name: "Margaret, H.", email: "mh@x.example", favorite: true), "m.json")])
        _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "m;h"))
        await assertEventually({ records.messages.contains { $0.contains("exited with status 0") } }, "\(records.messages)")
        let card = try String(contentsOfFile: folder + "/copied.vcf", encoding: .utf8)
        XCTAssertEqual(card, "BEGIN:VCARD\r\nVERSION:4.0\r\nUID:m\\;h\r\nFN:Margaret\\, H.\r\nEMAIL:mh@x.example\r\nEND:VCARD\r\n")
        let copy = folder + "/run/cards/" + ContactCards.fileName(for: "m;h")
        var info = stat()
        XCTAssertEqual(stat(copy, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(stat(folder + "/run/cards", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
    }

    /// The apps' sockets share the runtime folder and their contacts may share identifiers, so
    /// an app's copies go to a folder of its own.
    func testAnAppsCopiesHaveAFolderOfTheirOwn() throws {
        let contact = Contact(identifier: "m;h", name: "Margaret", favorite: true)
        let mail = try ContactCards.file(
            for: contact, from: .written, besideSocket: folder + "/run/mail.sock", instance: .app(AppName(validating: "mail")))
        let plain = try ContactCards.file(for: contact, from: .written, besideSocket: folder + "/run/qactd.sock")
        XCTAssertEqual(mail, folder + "/run/mail.cards/" + ContactCards.fileName(for: "m;h"))
        XCTAssertEqual(plain, folder + "/run/cards/" + ContactCards.fileName(for: "m;h"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: mail))
        XCTAssertTrue(FileManager.default.fileExists(atPath: plain))
    }

    func testACommandThatFailsIsLoggedWithItsStderrAndShown() async throws {
        let (core, records) = try makeCore(
            "[Actions]\nSearchAction=/bin/sh -c 'echo oops >&2; exit 7'\n", staticItems: [ShortcutItem(type: "SearchAction", title: "Search")])
        _ = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        await assertEventually({
            records.messages.contains { $0.contains("exited with status 7; its stderr ended with: oops") }
        }, "\(records.messages)")
        await assertEventually({
            records.messages.contains { $0.hasPrefix("Notice for the desktop: “Search” did not work: The command “/bin/sh” failed: it exited with status 7. It said: oops") }
        }, "\(records.messages)")
    }

    /// One card of a file holding several: `{file}` is that card, byte for byte, not the file.
    func testACardOfAFileOfSeveralIsThatCardWhole() async throws {
        let contacts = folder + "/contacts"
        try FileManager.default.createDirectory(atPath: contacts, withIntermediateDirectories: true)
        let first = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:one\r\nFN:One\r\nEND:VCARD\r\n"
        let second = "begin:vcard\nVERSION:3.0\nUID:two\nFN:Two\nTEL;TYPE=cell:+1 555 0100\nNOTE:kept whole\nCATEGORIES:favorite\nEND:VCARD\n"
        try (first + second).write(toFile: contacts + "/both.vcf", atomically: true, encoding: .utf8)
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/cp {file} \(folder)/copied.vcf\n")
        let parsed = try VCardParser.parse(Array((first + second).utf8), fileStem: "both", options: ContactParsingOptions(favoriteCategories: ["favorite"]))
        let changes = [ContactIndexChange.file(path: contacts + "/both.vcf", result: .success(parsed))]
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        _ = await core.resignActive(appVersion: "1.0")
        _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "two"))
        await assertEventually({ records.messages.contains { $0.contains("exited with status 0") } }, "\(records.messages)")
        XCTAssertEqual(try String(contentsOfFile: folder + "/copied.vcf", encoding: .utf8), second)

        // The file no longer holds it: nothing runs, and the argv never goes without its card.
        try first.write(toFile: contacts + "/both.vcf", atomically: true, encoding: .utf8)
        do {
            _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "two"))
            XCTFail("a card that cannot be provided must refuse the command")
        } catch {
            guard case .commandRefused(let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("both.vcf' no longer holds its card 2"), reason)
        }
        XCTAssertTrue(records.messages.contains { $0.hasPrefix("Notice for the desktop: “Two” did not work: Nothing was run: the contact's card cannot be handed to it") }, "\(records.messages)")
        let usage = await core.status().usage
        XCTAssertEqual(usage["FavoriteAction/two"], 1, "the refused trigger is not counted")
    }

    /// An Evolution contact's card is its row's vCard, whole (not a copy made of the few values
    /// the index keeps).
    func testAnEvolutionContactsCardIsItsRowsVCard() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3") else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("sqlite3 is not installed: run scripts/install-deps --test") }
            throw unavailable("sqlite3 is not installed: run scripts/install-deps --test")
        }
        let book = folder + "/.local/share/evolution/addressbook/work-book"
        try FileManager.default.createDirectory(atPath: book, withIntermediateDirectories: true)
        let card = "BEGIN:VCARD\r\nVERSION:3.0\r\nUID:row/1\r\nFN:Row One\r\nEMAIL:row@x.example\r\nTEL:+1 555 0101\r\nADR:;;1 Main St;Town;;;\r\nX-FOLKS-FAVOURITE:true\r\nEND:VCARD"
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        sqlite.arguments = [book + "/contacts.db", """
            CREATE TABLE folder_id (uid TEXT PRIMARY KEY, Rev TEXT, file_as TEXT, full_name TEXT, vcard TEXT, bdata TEXT);
            INSERT INTO folder_id (uid, Rev, vcard) VALUES ('row/1', '1', '\(card)');
            """]
        try sqlite.run()
        sqlite.waitUntilExit()
        XCTAssertEqual(sqlite.terminationStatus, 0)
        let (core, records) = try makeCore("[Actions]\nFavoriteAction=/bin/cp {file} \(folder)/copied.vcf\n")
        let row = Contact(identifier: "row/1", name: "Row One", email: "row@x.example", emails: ["row@x.example"], favorite: true)
        let changes = [ContactIndexChange.file(path: EvolutionCards.path(book: "work-book", uid: "row/1"), result: .success([row]))]
        await core.applyWatcherUpdate(ContactsDirectoryUpdate(changes: changes, work: ActivityCounters(), health: WatchHealthInfo(state: "watching")))
        _ = await core.resignActive(appVersion: "1.0")
        _ = try await core.trigger(.type("FavoriteAction", contactIdentifier: "row/1"))
        await assertEventually({ records.messages.contains { $0.contains("exited with status 0") } }, "\(records.messages)")
        XCTAssertEqual(try String(contentsOfFile: folder + "/copied.vcf", encoding: .utf8), card)
    }

    /// `[Commands] MaxRunning=`: past it a command is refused (nothing counted, a notice), and
    /// once one ends another may start; `Status` counts them.
    func testCommandsPastTheCapAreRefusedUntilOneEnds() async throws {
        let gate = folder + "/gate"
        let (core, records) = try makeCore("""
            [Commands]
            MaxRunning=1
            [Actions]
            SearchAction=/bin/sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done' sh \(gate)
            """, staticItems: [ShortcutItem(type: "SearchAction", title: "Search")])
        _ = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        var status = await core.status()
        XCTAssertEqual(status.commands.running, 1)
        XCTAssertEqual(status.commands.limit, 1)
        XCTAssertEqual(status.commands.start, "direct")
        do {
            _ = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
            XCTFail("a second command past MaxRunning=1 must be refused")
        } catch {
            XCTAssertEqual(error, .commandRefused("1 commands of quick actions are still running, as many as [Commands] MaxRunning=1 allows"))
        }
        XCTAssertTrue(records.messages.contains { $0.hasPrefix("Notice for the desktop: “Search” did not work: Nothing was run: 1 commands") }, "\(records.messages)")
        let usage = await core.status().usage
        XCTAssertEqual(usage["SearchAction"], 1)
        _ = FileManager.default.createFile(atPath: gate, contents: nil)
        await assertEventually({ records.messages.contains { $0.contains("exited with status 0") } }, "\(records.messages)")
        status = await core.status()
        XCTAssertEqual(status.commands.running, 0)
        _ = try await core.trigger(.type("SearchAction", contactIdentifier: nil))
        let after = await core.status().usage
        XCTAssertEqual(after["SearchAction"], 2)
    }
}
