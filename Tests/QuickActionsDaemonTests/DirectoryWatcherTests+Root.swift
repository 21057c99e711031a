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
    // MARK: The root, the stop and the watch limit

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

    func testStopTwiceAndReloadAfterStopReturnAtOnce() throws {
        let watcher = start()
        watcher.stop()
        watcher.stop()
        let done = DispatchSemaphore(value: 0)
        let scanner = ContactsDirectoryScanner(root: root)
        Task { [watcher] in
            await watcher.watcher.reload(scanner)
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
            await watcher.watcher.reload(vip)
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
            await watcher.watcher.reload(ContactsDirectoryScanner(root: other))
            moved.signal()
        }
        moved.wait()
        XCTAssertEqual(watcher.names, ["Zed"])
        try write("late.vcf", card("Late"))
        try Data(card("Yan").utf8).write(to: URL(fileURLWithPath: other + "/yan.vcf"))
        XCTAssertTrue(waitUntil { watcher.names == ["Yan", "Zed"] })
    }
}
