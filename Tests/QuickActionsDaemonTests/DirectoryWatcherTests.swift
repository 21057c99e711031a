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

/// A `DirectoryWatcher` on a real temp folder with real inotify, feeding an index the way
/// `DaemonCore` does; tests wait for the index to reach a condition, never for a time.
final class WatcherHarness: Sendable {
    struct Seen {
        var index = ContactIndex()
        var work = ActivityCounters()
        var health = WatchHealthInfo(state: "none")
    }

    let watcher: DirectoryWatcher
    let log: RecordingLogHandler.Store
    private let seen = NIOLockedValueBox(Seen())

    init(
        root: String, timing: DirectoryWatcherTiming = DirectoryWatcherTiming(), addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) {
        let (logger, log) = Logger.recording(level: .debug)
        self.log = log
        watcher = DirectoryWatcher(
            scanner: ContactsDirectoryScanner(root: root), logger: logger, timing: timing, addWatch: addWatch,
            probeWriter: probeWriter)
        apply(watcher.attach())
        watcher.run { [self] update in apply(update) }
    }

    /// While held, deliveries wait (as behind a busy core), so events pile up in the kernel queue.
    private let gate = NIOLockedValueBox((held: false, waiting: 0))

    func holdDeliveries() { gate.withLockedValue { $0.held = true } }
    func releaseDeliveries() { gate.withLockedValue { $0.held = false } }
    var waitingDeliveries: Int { gate.withLockedValue { $0.waiting } }

    private func apply(_ update: ContactsDirectoryUpdate) {
        if gate.withLockedValue({ gate -> Bool in
            if gate.held { gate.waiting += 1 }
            return gate.held
        }) {
            _ = waitUntil(timeout: 60, every: .milliseconds(1)) { !gate.withLockedValue { $0.held } }
            gate.withLockedValue { $0.waiting -= 1 }
        }
        seen.withLockedValue { seen in
            for change in update.changes {
                switch change {
                case .file(let path, let result): seen.index.apply(path: path, result: result)
                case .removed(let path): seen.index.remove(path: path)
                case .removedTree(let directory): seen.index.removeAll(under: directory)
                }
            }
            seen.work.eventsHandled += update.work.eventsHandled
            seen.work.filesParsed += update.work.filesParsed
            seen.work.rescans += update.work.rescans
            seen.health = update.health
        }
    }

    var index: ContactIndex { seen.withLockedValue { $0.index } }
    var work: ActivityCounters { seen.withLockedValue { $0.work } }
    var health: WatchHealthInfo { seen.withLockedValue { $0.health } }
    var names: [String] { index.paths.flatMap { (try? index.entry(path: $0)?.get())?.map(\.name) ?? [] }.sorted() }
    var favoriteNames: [String] { index.favorites.map(\.name) }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        Task { [watcher] in
            await watcher.stop()
            done.signal()
        }
        done.wait()
    }
}

/// The writer probe with a script: the next `staleAnswers` probes say a writer is still there
/// (as the kernel does for a writer between queuing its `IN_CLOSE_WRITE` and dropping its
/// write access), then the real lease decides.
final class ScriptedWriterProbe: Sendable {
    private let staleAnswers = NIOLockedValueBox(0)
    private let made = NIOLockedValueBox(0)

    func reportStaleWriter(times: Int) { staleAnswers.withLockedValue { $0 = times } }
    var staleAnswersLeft: Int { staleAnswers.withLockedValue { $0 } }
    var probesMade: Int { made.withLockedValue { $0 } }

    var probe: WriterProbe {
        { [self] descriptor in
            made.withLockedValue { $0 += 1 }
            let stale = staleAnswers.withLockedValue { left -> Bool in
                guard left > 0 else { return false }
                left -= 1
                return true
            }
            return stale ? true : OpenForWritingProbe.acquireReadLease(descriptor)
        }
    }
}

/// Rewrites a file in place the way `open('w')`, write, close does: same inode, no rename.
func rewriteInPlace(_ path: String, _ text: String, file: StaticString = #filePath, line: UInt = #line) {
    let descriptor = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0o644)
    XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path)", file: file, line: line)
    let bytes = Array(text.utf8)
    XCTAssertEqual(bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, bytes.count, file: file, line: line)
    close(descriptor)
}

/// A file in the middle of a save: opened for writing with the first half of its text
/// written, the rest written and the file closed by `finish()`.
struct HalfWrittenFile {
    let path: String
    private let descriptor: CInt
    private let rest: [UInt8]

    init(_ path: String, _ text: String, flags: CInt = O_CREAT | O_EXCL, file: StaticString = #filePath, line: UInt = #line) {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CLOEXEC | flags, 0o644)
        XCTAssertGreaterThanOrEqual(descriptor, 0, "open \(path)", file: file, line: line)
        let bytes = Array(text.utf8)
        let half = bytes.count / 2
        rest = Array(bytes[half...])
        XCTAssertEqual(bytes[..<half].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, half, file: file, line: line)
    }

    func finish(file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(rest.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }, rest.count, file: file, line: line)
        close(descriptor)
    }
}

final class DirectoryWatcherTests: XCTestCase {
    private var base = ""
    private var root: String { base + "/contacts" }
    private var harness: WatcherHarness?

    override func setUpWithError() throws {
        base = FileManager.default.temporaryDirectory.appendingPathComponent("qactd-watch-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base + "/contacts", withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        harness?.stop()
        harness = nil
        try? FileManager.default.removeItem(atPath: base)
    }

    private func start(
        timing: DirectoryWatcherTiming = DirectoryWatcherTiming(), addWatch: @escaping InotifyAddWatch = { inotify_add_watch($0, $1, $2) },
        probeWriter: @escaping WriterProbe = OpenForWritingProbe.acquireReadLease
    ) -> WatcherHarness {
        let started = WatcherHarness(root: root, timing: timing, addWatch: addWatch, probeWriter: probeWriter)
        harness = started
        return started
    }

    private func card(_ name: String, favorite: Bool = false, uid: String? = nil) -> String {
        ContactCard.vCard(name, favorite: favorite, uid: uid)
    }

    /// Plain open(O_CREAT|O_TRUNC), write, close: no rename.
    private func write(_ relativePath: String, _ text: String) throws {
        let path = root + "/" + relativePath
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func run(_ arguments: [String], environment: [String: String] = [:], input: String? = nil) throws -> (status: Int32, output: String) {
        runCommand(arguments, environment: environment, input: input)
    }

    /// A change written after `change` that the test waits for: events are handled in order,
    /// so once the marker is in the index every earlier event has been handled too.
    private func settle(_ watcher: WatcherHarness, file: StaticString = #filePath, line: UInt = #line) throws {
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

    // MARK: A closed file is always read (the writer's close racing the probe)

    func testACloseWhoseWriterTheKernelStillCountsIsReadOnceTheWriterIsGone() throws {
        // Deterministic: the probe says "writer" right after the close, as the kernel does
        // for the closing writer for a few microseconds. No later event comes for the file.
        let probe = ScriptedWriterProbe()
        let watcher = start(probeWriter: probe.probe)
        try write("ann.vcf", card("Ann"))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann"] }, "\(watcher.names)")
        try settle(watcher)

        probe.reportStaleWriter(times: 3)
        rewriteInPlace(root + "/ann.vcf", card("Ann Edited"))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann Edited"] }, "the closed file is read once the writer is gone: \(watcher.names)")
        XCTAssertEqual(probe.staleAnswersLeft, 0, "each stale answer was met by a probe made again")
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriterCount == 0 })
    }

    func testAFileWaitingForItsWriterShowsInStatusUntilItIsRead() throws {
        let probe = ScriptedWriterProbe()
        let watcher = start(probeWriter: probe.probe)
        try write("bob.vcf", card("Bob"))
        XCTAssertTrue(waitUntil { watcher.names == ["Bob"] })

        // A writer the kernel keeps counting: the file waits, visibly, and the index keeps Bob.
        let before = Date()
        probe.reportStaleWriter(times: .max)
        rewriteInPlace(root + "/bob.vcf", card("Robert"))
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.map(\.path) == [self.root + "/bob.vcf"] }, "\(watcher.health)")
        let wait = try XCTUnwrap(watcher.health.waitingForWriter.first)
        let since = try Date(wait.since, strategy: .iso8601)
        XCTAssertLessThanOrEqual(abs(since.timeIntervalSince(before)), 5, "since when: \(wait.since)")
        XCTAssertEqual(watcher.health.waitingForWriterCount, 1)
        XCTAssertEqual(watcher.names, ["Bob"], "never read while a writer has it")

        // The writer goes away without any further event: the backoff alone brings the file in.
        let probesBefore = probe.probesMade
        XCTAssertTrue(waitUntil { probe.probesMade >= probesBefore + 2 }, "probed again on its own")
        probe.reportStaleWriter(times: 0)
        XCTAssertTrue(waitUntil { watcher.names == ["Robert"] }, "\(watcher.names)")
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.isEmpty && watcher.health.waitingForWriterCount == 0 })
    }

    func testAFileHeldOpenForWritingIsListedWithItsPathAndSince() throws {
        let watcher = start()
        let saving = HalfWrittenFile(root + "/slow.vcf", card("Slow"))
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.map(\.path) == [saving.path] }, "\(watcher.health)")
        XCTAssertNil(watcher.index.entry(path: saving.path))
        saving.finish()
        XCTAssertTrue(waitUntil { watcher.names == ["Slow"] })
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.isEmpty })
    }

    func testAWaitingFileWhoseWriterClosesJustBeforeItsProbeIsParsedOnce() throws {
        // The writer closes right before a backoff probe, so the probe finds the file finished
        // while its IN_CLOSE_WRITE sits unread in the queue (as under ThreadSanitizer, where a
        // slow watcher meets this often). The probe's read and that event's are one read.
        let closing = NIOLockedValueBox<HalfWrittenFile?>(nil)
        let watcher = start(probeWriter: { descriptor in
            closing.withLockedValue { saving in
                saving?.finish()
                saving = nil
            }
            return OpenForWritingProbe.acquireReadLease(descriptor)
        })
        let parsedBefore = watcher.work.filesParsed
        let saving = HalfWrittenFile(root + "/slow.vcf", card("Slow"))
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.map(\.path) == [saving.path] }, "\(watcher.health)")
        closing.withLockedValue { $0 = saving }
        XCTAssertTrue(waitUntil { watcher.names == ["Slow"] }, "\(watcher.names)")
        XCTAssertNil(closing.withLockedValue { $0 }, "the writer was closed by a probe")
        try settle(watcher)
        XCTAssertEqual(watcher.work.filesParsed, parsedBefore + 1 + 1, "the card once, plus the settle marker")
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriter.isEmpty })
    }

    func testInPlaceRewritesRightAfterStartAllReachTheIndex() throws {
        // The real race, many times over: each close may be read while the kernel still
        // counts its writer, and not one rewrite may be lost.
        for number in 0..<300 { try write("r\(number).vcf", card("Old \(number)", uid: "r\(number)")) }
        for round in 0..<3 {
            let watcher = WatcherHarness(root: root)
            for number in 0..<300 { rewriteInPlace(root + "/r\(number).vcf", card("Round \(round) \(number)", uid: "r\(number)")) }
            let expected = (0..<300).map { "Round \(round) \($0)" }.sorted()
            XCTAssertTrue(waitUntil(timeout: 20) { watcher.names == expected },
                          "round \(round): stale \(watcher.names.filter { !$0.hasPrefix("Round \(round) ") }.prefix(10))")
            XCTAssertTrue(waitUntil { watcher.health.waitingForWriterCount == 0 }, "\(watcher.health)")
            watcher.stop()
        }
    }

    func testABulkCopyOfThousandsOfFilesIntoANewFolderEndsWithTheIndexEqualToTheDisk() throws {
        let staging = base + "/staging"
        try FileManager.default.createDirectory(atPath: staging + "/inner", withIntermediateDirectories: true)
        let count = 3000
        for number in 0..<count {
            let folder = number % 2 == 0 ? staging : staging + "/inner"
            rewriteInPlace(folder + "/c\(number).vcf", card("Copied \(number)", uid: "copied-\(number)"))
        }
        let watcher = start()
        // Python's shutil.copytree, as measured: creates each file, writes it, closes it.
        let copy = try run(["python3", "-c", "import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2])", staging, root + "/copied"])
        XCTAssertEqual(copy.status, 0, copy.output)

        let onDisk = try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.hasSuffix(".vcf") }.map { root + "/" + $0 }.sorted()
        XCTAssertEqual(onDisk.count, count)
        XCTAssertTrue(waitUntil(timeout: 30) { watcher.index.contactCount == count && watcher.index.invalidFiles.isEmpty },
                      "\(watcher.index.contactCount) contacts, invalid: \(watcher.index.invalidFiles.prefix(5))")
        let index = watcher.index
        XCTAssertEqual(index.paths.sorted(), onDisk, "file for file")
        let misread = onDisk.filter { path in
            let number = path.split(separator: "/").last.map { $0.dropFirst().dropLast(4) } ?? ""
            return (try? index.entry(path: path)?.get().map(\.name)) != ["Copied \(number)"]
        }
        XCTAssertEqual(misread, [], "each file holds what was copied into it")
        XCTAssertTrue(waitUntil { watcher.health.waitingForWriterCount == 0 })
    }

    func testAFileBeingWrittenInANewFolderIsNotReadHalfDone() throws {
        let watcher = start()
        try FileManager.default.createDirectory(atPath: root + "/fresh", withIntermediateDirectories: true)
        let saving = HalfWrittenFile(root + "/fresh/ann.vcf", card("Ann", favorite: true))
        try settle(watcher)  // the new folder has been walked, and the file's IN_CREATE handled, by now
        XCTAssertNil(watcher.index.entry(path: saving.path), "neither the walk of the new folder nor IN_CREATE read it half-written")
        saving.finish()
        XCTAssertTrue(waitUntil { watcher.favoriteNames == ["Ann"] })
    }

    func testFilesCreatedInANewFolderRightAwayAreNotMissed() throws {
        let watcher = start()
        // mkdir -p plus files immediately: the folder's watch may come after some of them.
        for round in 0..<20 {
            let folder = root + "/burst\(round)/inner"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for number in 0..<5 { try Data(card("P\(round)-\(number)", uid: "p\(round)-\(number)").utf8).write(to: URL(fileURLWithPath: folder + "/\(number).vcf")) }
        }
        XCTAssertTrue(waitUntil { watcher.index.contactCount == 100 }, "\(watcher.index.contactCount) \(watcher.log.messages.joined(separator: "\n"))")
    }

    func testTheRootDeletedAndCreatedAgainIsWatchedAgain() throws {
        try write("a/ann.vcf", card("Ann"))
        let watcher = start()
        try FileManager.default.removeItem(atPath: root)
        XCTAssertTrue(waitUntil { watcher.health.state == "reattaching" && watcher.names.isEmpty }, "\(watcher.health) \(watcher.names) \(watcher.log.messages.joined(separator: "\n"))")
        try write("b/bob.vcf", card("Bob", favorite: true))
        XCTAssertTrue(waitUntil { watcher.names == ["Bob"] && watcher.health.state == "watching" })
        try write("b/carl.vcf", card("Carl"))
        XCTAssertTrue(waitUntil { watcher.names == ["Bob", "Carl"] })

        // Moved away and another folder moved into its place.
        try FileManager.default.moveItem(atPath: root, toPath: base + "/old")
        XCTAssertTrue(waitUntil { watcher.names.isEmpty }, "\(watcher.names) \(watcher.log.messages.joined(separator: "\n"))")
        try Data(card("Old").utf8).write(to: URL(fileURLWithPath: base + "/old/b/old.vcf"))
        let replacement = base + "/replacement"
        try FileManager.default.createDirectory(atPath: replacement, withIntermediateDirectories: true)
        try Data(card("Dora").utf8).write(to: URL(fileURLWithPath: replacement + "/dora.vcf"))
        try FileManager.default.moveItem(atPath: replacement, toPath: root)
        XCTAssertTrue(waitUntil { watcher.names == ["Dora"] }, "\(watcher.names)")
        XCTAssertTrue(watcher.log.messages.contains { $0.contains("is missing") }, "the log says so")
    }

    func testAMissingRootIsFoundByPeriodicRetriesWhenItsParentIsGoneToo() throws {
        try FileManager.default.removeItem(atPath: root)
        let nestedRoot = base + "/deeper/contacts"
        let watcher = WatcherHarness(root: nestedRoot, timing: DirectoryWatcherTiming(reattachRetryInterval: .milliseconds(50)))
        harness = watcher
        XCTAssertEqual(watcher.health.state, "reattaching")
        try FileManager.default.createDirectory(atPath: nestedRoot, withIntermediateDirectories: true)
        try Data(card("Ann").utf8).write(to: URL(fileURLWithPath: nestedRoot + "/ann.vcf"))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann"] && watcher.health.state == "watching" })
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

    func testStopTwiceAndReloadAfterStopReturnAtOnce() throws {
        let watcher = start()
        watcher.stop()
        watcher.stop()
        let done = DispatchSemaphore(value: 0)
        let scanner = ContactsDirectoryScanner(root: root)
        Task { [watcher] in
            await watcher.watcher.reload(scanner: scanner)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success, "a reload after stop must not wait forever")
        harness = nil
    }

    // MARK: The watch limit

    func testWhenTheWatchLimitIsHitTheTreeIsRescannedPeriodicallyAndRecovers() throws {
        try write("small/ann.vcf", card("Ann"))
        try write("big/one/bob.vcf", card("Bob"))
        let full = Atomic<Bool>(true)
        let limitedFolder = root + "/big"
        let watcher = start(timing: DirectoryWatcherTiming(degradedRescanInterval: .milliseconds(100))) { inotify, path, mask in
            // The table is "full" for the big tree until the test frees it.
            if full.load(ordering: .relaxed) && path.hasPrefix(limitedFolder) {
                errno = ENOSPC
                return -1
            }
            return inotify_add_watch(inotify, path, mask)
        }
        XCTAssertEqual(watcher.names, ["Ann", "Bob"], "contacts in the unwatched tree are still served")
        XCTAssertEqual(watcher.health.state, "degraded")
        XCTAssertEqual(watcher.health.degradedTrees, [limitedFolder])
        XCTAssertTrue(watcher.health.message?.contains("max_user_watches") == true, watcher.health.message ?? "")
        XCTAssertTrue(watcher.log.messages.contains { $0.contains("Cannot watch '\(limitedFolder)'") && $0.contains("rescanning") },
                      "\(watcher.log.messages)")

        // Changes in the unwatched tree arrive through the periodic rescans.
        try write("big/one/carl.vcf", card("Carl", favorite: true))
        try FileManager.default.removeItem(atPath: root + "/big/one/bob.vcf")
        XCTAssertTrue(waitUntil { watcher.names == ["Ann", "Carl"] }, "\(watcher.names)")
        XCTAssertGreaterThan(watcher.work.rescans, 0)
        // The watched part still works by events.
        try write("small/dora.vcf", card("Dora"))
        XCTAssertTrue(waitUntil { watcher.names == ["Ann", "Carl", "Dora"] })

        // Watches fit again: the next rescan adds them and the tree is watched by events.
        full.store(false, ordering: .relaxed)
        XCTAssertTrue(waitUntil { watcher.health.state == "watching" })
        let rescans = watcher.work.rescans
        try write("big/one/eve.vcf", card("Eve"))
        XCTAssertTrue(waitUntil { watcher.names.contains("Eve") })
        XCTAssertEqual(watcher.work.rescans, rescans, "found by its event, not a rescan")
    }

    func testReloadRescansWithNewSettingsAndCanMoveTheRoot() throws {
        try write("ann.vcf", "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Ann\r\nCATEGORIES:vip\r\nEND:VCARD\r\n")
        let watcher = start()
        XCTAssertEqual(watcher.favoriteNames, [])
        let reload = DispatchSemaphore(value: 0)
        let vip = ContactsDirectoryScanner(root: root, options: ContactParsingOptions(favoriteCategories: ["vip"]))
        Task { [watcher] in
            await watcher.watcher.reload(scanner: vip)
            reload.signal()
        }
        reload.wait()
        XCTAssertEqual(watcher.favoriteNames, ["Ann"], "the reply comes after the index is current")
        XCTAssertEqual(watcher.work.rescans, 1)

        let other = base + "/other"
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data(card("Zed").utf8).write(to: URL(fileURLWithPath: other + "/zed.vcf"))
        let moved = DispatchSemaphore(value: 0)
        Task { [watcher] in
            await watcher.watcher.reload(scanner: ContactsDirectoryScanner(root: other))
            moved.signal()
        }
        moved.wait()
        XCTAssertEqual(watcher.names, ["Zed"])
        try write("late.vcf", card("Late"))
        try Data(card("Yan").utf8).write(to: URL(fileURLWithPath: other + "/yan.vcf"))
        XCTAssertTrue(waitUntil { watcher.names == ["Yan", "Zed"] })
    }
}
