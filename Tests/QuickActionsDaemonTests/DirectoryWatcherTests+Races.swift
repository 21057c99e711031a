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

extension DirectoryWatcherTests {
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
}
