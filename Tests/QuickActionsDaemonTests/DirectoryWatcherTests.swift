import Contacts
import NIOConcurrencyHelpers
import Dispatch
import Foundation
import Glibc
import Synchronization
import QuickActionsProtocol
import Logging
import TestSupport
import XCTest

@testable import QuickActionsDaemon


final class DirectoryWatcherTests: XCTestCase {
    var base = ""
    var root: String { base + "/contacts" }
    var harness: WatcherHarness?

    override func setUpWithError() throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-watch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base + "/contacts", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        harness?.stop()
        harness = nil
        try? FileManager.default.removeItem(atPath: base)
    }

    func start(
        timing: DirectoryWatcherTiming = DirectoryWatcherTiming(), addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) -> WatcherHarness {
        let started = WatcherHarness(root: root, timing: timing, addWatch: addWatch, probeWriter: probeWriter)
        harness = started
        return started
    }

    func card(_ name: String, favorite: Bool = false, uid: String? = nil) -> String {
        ContactCard.vCard(name, favorite: favorite, uid: uid)
    }

    /// Plain open(O_CREAT|O_TRUNC), write, close: no rename.
    func write(_ relativePath: String, _ text: String) throws {
        let path = root + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws -> (status: Int32, output: String) {
        runCommand(arguments, environment: environment, input: input)
    }

    /// A change written after `change` that the test waits for: events are handled in order,
    /// so once the marker is in the index every earlier event has been handled too.
    func settle(_ watcher: WatcherHarness, file: StaticString = #filePath, line: UInt = #line) throws {
        let marker = "marker-\(UUID().uuidString.prefix(8))"
        try write("\(marker).vcf", card(marker))
        XCTAssertTrue(waitUntil { watcher.names.contains(marker) }, "the marker never arrived", file: file, line: line)
        try FileManager.default.removeItem(atPath: root + "/\(marker).vcf")
        XCTAssertTrue(waitUntil { !watcher.names.contains(marker) }, file: file, line: line)
    }

    // MARK: Start

    func testTheFirstWalkWatchesEveryFolderAndReadsEachFileOnce() throws {
        try write("top.vcf", card("Top"))
        try write("personal/ann.vcf", card("Ann", favorite: true))
        try write("work/team/deep/bob.json", #"{"name": "Bob", "favorite": true}"#)
        try write("work/displayname", "Work")
        let watcher = start()
        XCTAssertEqual(watcher.names, ["Ann", "Bob", "Top"])
        XCTAssertEqual(watcher.work.filesParsed, 3)
        XCTAssertEqual(watcher.work.rescans, 0)
        XCTAssertEqual(watcher.health.state, "watching")
        // Every folder, however deep, reports changes.
        try write("work/team/deep/carl.vcf", card("Carl"))
        XCTAssertTrue(waitUntil { watcher.names.contains("Carl") })
    }

    // MARK: Every way a file changes

    func testWriteThenCloseParsesTheFileOnceAndNeverHalfWritten() throws {
        let watcher = start()
        let saving = HalfWrittenFile(root + "/ann.vcf", card("Ann", favorite: true))
        try settle(watcher)  // IN_CREATE of the half-written file has been handled by now
        XCTAssertNil(watcher.index.entry(path: saving.path), "a file still being written is not read")
        let parsedBefore = watcher.work.filesParsed
        saving.finish()
        XCTAssertTrue(waitUntil { watcher.favoriteNames == ["Ann"] })
        XCTAssertEqual(watcher.work.filesParsed, parsedBefore + 1, "one close, one parse")

        // Editing one file in place parses exactly that file.
        try settle(watcher)
        let beforeEdit = watcher.work.filesParsed
        try write("ann.vcf", card("Ann Edited", favorite: true))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann Edited"] })
        XCTAssertEqual(watcher.work.filesParsed, beforeEdit + 1)
    }

    func testEveryNewFileIsParsedExactlyOnceHoweverItsEventsAreBatched() throws {
        for folder in 0..<3 { try FileManager.default.createDirectory(atPath: root + "/new/\(folder)", withIntermediateDirectories: true) }
        let watcher = start()
        // IN_CREATE and IN_CLOSE_WRITE of one file may arrive in one read or in two.
        // (The folders exist already: a file written into a brand-new folder while it is
        // being listed may be read by the listing and again by its own events.)
        for number in 0..<300 {
            try write("new/\(number % 3)/\(number).vcf", card("New \(number)", uid: "new-\(number)"))
        }
        XCTAssertTrue(waitUntil { watcher.index.contactCount == 300 }, "\(watcher.index.contactCount)")
        try settle(watcher)
        XCTAssertEqual(watcher.work.filesParsed, 300 + 1, "each card once, plus the settle marker")
    }

    /// A watcher slower than the writer (as under ThreadSanitizer, where the test above can
    /// count 302 parses unless this holds): each re-read of the queue brings new files, so a
    /// batch ends at the bound on re-reads with finished files whose IN_CLOSE_WRITE is
    /// queued. They must wait for the next batch and be read once, not now and again at their
    /// close.
    func testEveryNewFileIsParsedExactlyOnceWhenTheWatcherIsSlowerThanTheWriter() throws {
        for folder in 0..<3 { try FileManager.default.createDirectory(atPath: root + "/new/\(folder)", withIntermediateDirectories: true) }
        let watcher = start(probeWriter: { descriptor in
            usleep(1_000)
            return OpenForWritingProbe.acquireReadLease(descriptor)
        })
        // Each file stays open a while, so that a read of the queue often finds its IN_CREATE
        // without its IN_CLOSE_WRITE, and the probe after it finds it finished.
        for number in 0..<300 {
            let saving = HalfWrittenFile(root + "/new/\(number % 3)/\(number).vcf", card("New \(number)", uid: "new-\(number)"))
            usleep(300)
            saving.finish()
        }
        XCTAssertTrue(waitUntil(timeout: 30) { watcher.index.contactCount == 300 }, "\(watcher.index.contactCount)")
        try settle(watcher)
        XCTAssertEqual(watcher.work.filesParsed, 300 + 1, "each card once, plus the settle marker")
    }

    func testSavesByRenameLikeVimSedAndVdirsyncer() throws {
        try write("vim.vcf", card("Vim"))
        try write("sed.vcf", card("Sed"))
        try write("sync/remote.vcf", card("Remote"))
        let watcher = start()
        XCTAssertEqual(watcher.names, ["Remote", "Sed", "Vim"])

        // vim with `backupcopy=no`: the old file becomes the backup, a new file is written.
        try FileManager.default.moveItem(atPath: root + "/vim.vcf", toPath: root + "/vim.vcf~")
        try write("vim.vcf", card("Vim Saved", favorite: true))
        try FileManager.default.removeItem(atPath: root + "/vim.vcf~")
        XCTAssertTrue(waitUntil { watcher.names.contains("Vim Saved") })

        // sed -i writes a temporary file next to it and renames it over the original.
        let sed = try run(["sed", "-i", "s/FN:Sed/FN:Sed Saved/", root + "/sed.vcf"])
        XCTAssertEqual(sed.status, 0, sed.output)
        XCTAssertTrue(waitUntil { watcher.names.contains("Sed Saved") })

        // vdirsyncer: write `<name>.vcf.tmp`-style files, then rename into place.
        try write("sync/.remote.vcf.tmp-x1", card("Remote Saved"))
        XCTAssertEqual(rename(root + "/sync/.remote.vcf.tmp-x1", root + "/sync/remote.vcf"), 0)
        try write("sync/new.vcf.tmp", card("Synced New", favorite: true))
        XCTAssertEqual(rename(root + "/sync/new.vcf.tmp", root + "/sync/new.vcf"), 0)
        XCTAssertTrue(waitUntil { watcher.names == ["Remote Saved", "Sed Saved", "Synced New", "Vim Saved"] }, "\(watcher.names)")
        XCTAssertEqual(watcher.favoriteNames, ["Synced New", "Vim Saved"])
        XCTAssertEqual(watcher.index.paths, [root + "/sed.vcf", root + "/sync/new.vcf", root + "/sync/remote.vcf", root + "/vim.vcf"],
                       "no temporary or backup file reached the index")
    }

    func testTheRealVimSavingByRenameAndInPlaceParsesOnce() throws {
        try write("vim.vcf", card("Vim"))
        let watcher = start()
        for (round, backupCopy) in ["no", "yes"].enumerated() {
            try settle(watcher)
            let parsed = watcher.work.filesParsed
            // backupcopy=no: the original is renamed to the backup and a new file written;
            // backupcopy=yes: the original is copied and rewritten in place. backupskip would
            // skip backups under /tmp, where this test runs.
            let vim = try run([
                "vim", "-u", "NONE", "-N", "-i", "NONE", "-n", "-es",
                "-c", "set backup writebackup backupcopy=\(backupCopy) backupskip= backupdir=.",
                "-c", "%s/^FN:.*/FN:Vim \(round)/", "-c", "wq", root + "/vim.vcf",
            ])
            XCTAssertEqual(vim.status, 0, vim.output)
            XCTAssertTrue(waitUntil { watcher.names == ["Vim \(round)"] }, "\(watcher.names)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: root + "/vim.vcf~"), "vim really made its backup")
            try settle(watcher)
            XCTAssertEqual(watcher.work.filesParsed, parsed + 2, "the saved card once, plus the settle marker")
        }
        XCTAssertEqual(watcher.index.paths, [root + "/vim.vcf"])
    }

    func testDeleteMoveWithinMoveInAndMoveOut() throws {
        try write("a/ann.vcf", card("Ann"))
        try write("a/bob.vcf", card("Bob"))
        try write("gone.vcf", card("Gone"))
        let outside = base + "/outside"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data(card("Incoming", favorite: true).utf8).write(to: URL(fileURLWithPath: outside + "/incoming.vcf"))
        let watcher = start()

        try FileManager.default.removeItem(atPath: root + "/gone.vcf")
        XCTAssertTrue(waitUntil { !watcher.names.contains("Gone") })

        try FileManager.default.createDirectory(atPath: root + "/b", withIntermediateDirectories: true)
        try FileManager.default.moveItem(atPath: root + "/a/ann.vcf", toPath: root + "/b/ann.vcf")
        XCTAssertTrue(waitUntil { watcher.index.entry(path: self.root + "/b/ann.vcf") != nil })
        XCTAssertNil(watcher.index.entry(path: root + "/a/ann.vcf"))

        try FileManager.default.moveItem(atPath: outside + "/incoming.vcf", toPath: root + "/incoming.vcf")
        XCTAssertTrue(waitUntil { watcher.favoriteNames == ["Incoming"] })

        try FileManager.default.moveItem(atPath: root + "/a/bob.vcf", toPath: outside + "/bob.vcf")
        XCTAssertTrue(waitUntil { watcher.names == ["Ann", "Incoming"] }, "\(watcher.names)")

        // A link named like a card is not followed, even when renamed into place.
        try FileManager.default.createSymbolicLink(atPath: root + "/link.vcf", withDestinationPath: outside + "/bob.vcf")
        try FileManager.default.createSymbolicLink(atPath: root + "/tmp-link", withDestinationPath: outside + "/bob.vcf")
        XCTAssertEqual(rename(root + "/tmp-link", root + "/incoming.vcf"), 0)
        try settle(watcher)
        XCTAssertEqual(watcher.names, ["Ann"])
        XCTAssertEqual(watcher.index.invalidFiles, [], "links are ignored, not reported")
    }

    func testCollectionFoldersDeletedMovedAndCreatedAgain() throws {
        try write("work/ann.vcf", card("Ann", favorite: true))
        try write("work/team/bob.vcf", card("Bob"))
        try write("home/carl.vcf", card("Carl"))
        let watcher = start()
        XCTAssertEqual(watcher.names, ["Ann", "Bob", "Carl"])

        // Moved within the tree: every file is found under its new path and the old watches go.
        try FileManager.default.moveItem(atPath: root + "/work", toPath: root + "/job")
        XCTAssertTrue(waitUntil { watcher.index.entry(path: self.root + "/job/team/bob.vcf") != nil })
        XCTAssertEqual(watcher.names, ["Ann", "Bob", "Carl"])
        XCTAssertFalse(watcher.index.paths.contains { $0.hasPrefix(self.root + "/work/") })
        try write("job/team/dora.vcf", card("Dora"))
        XCTAssertTrue(waitUntil { watcher.names.contains("Dora") }, "the moved folder's subfolders are still watched")

        // Deleted as a whole.
        try FileManager.default.removeItem(atPath: root + "/job")
        XCTAssertTrue(waitUntil { watcher.names == ["Carl"] }, "\(watcher.names)")

        // Moved out: it must stop reporting, even as it changes outside.
        try FileManager.default.moveItem(atPath: root + "/home", toPath: base + "/home-out")
        XCTAssertTrue(waitUntil { watcher.names == [] })
        try Data(card("Outside").utf8).write(to: URL(fileURLWithPath: base + "/home-out/outside.vcf"))

        // Created again with nested folders in one go, and moved back in.
        try FileManager.default.createDirectory(atPath: root + "/work/a/b/c", withIntermediateDirectories: true)
        try write("work/a/b/c/eve.vcf", card("Eve", favorite: true))
        try FileManager.default.moveItem(atPath: base + "/home-out", toPath: root + "/home")
        XCTAssertTrue(waitUntil { watcher.names == ["Carl", "Eve", "Outside"] }, "\(watcher.names)")
        try write("work/a/b/c/fay.vcf", card("Fay"))
        try write("home/gil.vcf", card("Gil"))
        XCTAssertTrue(waitUntil { watcher.names == ["Carl", "Eve", "Fay", "Gil", "Outside"] }, "\(watcher.names)")
        XCTAssertEqual(watcher.health.state, "watching")
    }

    func testACloseHandledWhileTheFileIsWrittenAgainDoesNotReadItHalfDone() throws {
        let watcher = start()
        try write("ann.vcf", card("Ann Zero"))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann Zero"] }, "\(watcher.names)")

        // The core is busy: the next save is read and its delivery waits.
        watcher.holdDeliveries()
        try write("ann.vcf", card("Ann One"))
        XCTAssertTrue(waitUntil { watcher.waitingDeliveries == 1 })
        // Meanwhile the file is saved again (its IN_CLOSE_WRITE queues) and then opened for a
        // third save, which is half written when the watcher gets to that close.
        try write("ann.vcf", card("Ann Two"))
        let saving = HalfWrittenFile(root + "/ann.vcf", card("Ann Three"), flags: O_TRUNC)
        watcher.releaseDeliveries()
        try settle(watcher)
        XCTAssertEqual(watcher.names, ["Ann One"], "the half-written third save was not read; the index keeps the last complete one")
        XCTAssertEqual(watcher.index.invalidFiles.count, 0)

        saving.finish()
        XCTAssertTrue(waitUntil { watcher.names == ["Ann Three"] }, "read at the writer's own close: \(watcher.names)")
    }

    func testAFileDeletedAndCreatedAgainLeavesTheIndexWhileTheNewOneIsWritten() throws {
        let watcher = start()
        try write("bob.vcf", card("Bob"))
        XCTAssertTrue(waitUntil { watcher.names == ["Bob"] }, "\(watcher.names)")

        // Delete and create again within one batch (the core was busy), the new file still open.
        watcher.holdDeliveries()
        try write("other.vcf", card("Other"))
        XCTAssertTrue(waitUntil { watcher.waitingDeliveries == 1 })
        try FileManager.default.removeItem(atPath: root + "/bob.vcf")
        let saving = HalfWrittenFile(root + "/bob.vcf", card("Robert"))
        watcher.releaseDeliveries()
        try settle(watcher)
        XCTAssertEqual(watcher.names, ["Other"], "the deleted Bob is gone; the new file waits for its close")

        saving.finish()
        XCTAssertTrue(waitUntil { watcher.names == ["Other", "Robert"] }, "\(watcher.names)")
    }


    func testKhardCreatesAndEditsAContact() throws {
        try FileManager.default.createDirectory(atPath: root + "/book", withIntermediateDirectories: true)
        let config = base + "/khard.conf"
        try """
            [addressbooks]
            [[book]]
            path = \(root)/book
            [general]
            editor = /bin/true
            merge_editor = /bin/true
            [vcard]
            preferred_version = 4.0
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let watcher = start()
        let template = base + "/new.yaml"
        try """
            Formatted name : Katherine Johnson
            First name : Katherine
            Last name : Johnson
            Email :
                work : katherine@nasa.example
            Categories : favorite
            """.write(toFile: template, atomically: true, encoding: .utf8)
        let created = try run(["khard", "-c", config, "new", "--vcard-version", "4.0", "-a", "book", "-i", template], input: "y\n")
        XCTAssertEqual(created.status, 0, created.output)
        XCTAssertTrue(waitUntil { watcher.favoriteNames == ["Katherine Johnson"] }, "\(watcher.names); log: \(watcher.log.messages)")
        let contact = try XCTUnwrap(watcher.index.favorites.first)
        XCTAssertEqual(contact.email, "katherine@nasa.example")

        let edited = base + "/edit.yaml"
        try """
            Formatted name : Katherine G. Johnson
            First name : Katherine
            Last name : Johnson
            Email :
                work : katherine@nasa.example
            Categories : colleagues
            """.write(toFile: edited, atomically: true, encoding: .utf8)
        let edit = try run(["khard", "-c", config, "edit", "-i", edited, "uid:\(contact.identifier)"], input: "y\n")
        XCTAssertEqual(edit.status, 0, edit.output)
        XCTAssertTrue(waitUntil { watcher.names == ["Katherine G. Johnson"] }, "\(watcher.names)")
        XCTAssertEqual(watcher.favoriteNames, [], "no longer a favorite")
        XCTAssertEqual(watcher.index.contact(identifier: contact.identifier)?.name, "Katherine G. Johnson", "same UID")

        let removed = try run(["khard", "-c", config, "remove", "--force", "uid:\(contact.identifier)"], input: "y\n")
        XCTAssertEqual(removed.status, 0, removed.output)
        XCTAssertTrue(waitUntil { watcher.names.isEmpty })
    }

    func testAHardLinkIsReadAtOnce() throws {
        let watcher = start()
        try Data(card("Linked").utf8).write(to: URL(fileURLWithPath: base + "/linked.vcf"))
        XCTAssertEqual(link(base + "/linked.vcf", root + "/linked.vcf"), 0)
        XCTAssertTrue(waitUntil { watcher.names == ["Linked"] })
    }
}
