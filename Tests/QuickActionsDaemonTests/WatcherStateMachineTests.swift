import Glibc
import XCTest

@testable import QuickActionsDaemon

/// The watcher's decisions, driven with no kernel and no files.
final class WatcherStateMachineTests: XCTestCase {
    typealias Action = WatcherStateMachine.Action

    /// Attached to /c with /c (wd 1), /c/work (wd 2) and /c/work/team (wd 3) watched.
    private func attachedMachine() -> WatcherStateMachine {
        var machine = WatcherStateMachine(root: "/c/")
        XCTAssertEqual(machine.start(), [.scanTree("/c", .attach)])
        XCTAssertEqual(machine.health, .reattaching, "nothing is watched before the first walk")
        XCTAssertEqual(machine.watchAdded(folder: "/c", descriptor: 1), [])
        XCTAssertEqual(machine.watchAdded(folder: "/c/work", descriptor: 2), [])
        XCTAssertEqual(machine.watchAdded(folder: "/c/work/team", descriptor: 3), [])
        XCTAssertEqual(machine.treeScanned("/c", folders: ["/c", "/c/work", "/c/work/team"]), [])
        XCTAssertEqual(machine.health, .watching)
        XCTAssertFalse(machine.needsPeriodicWork)
        return machine
    }

    private func event(_ descriptor: Int32, _ mask: InotifyEventMask, _ name: String? = nil) -> InotifyEvent {
        InotifyEvent(watchDescriptor: descriptor, mask: mask, name: name)
    }

    func testFileEventsBecomeReadsAndForgetsOnlyForContactFiles() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.handle(event(2, .closeWrite, "ann.vcf")), [.readFile("/c/work/ann.vcf")])
        XCTAssertEqual(machine.handle(event(1, .movedTo, "bob.json")), [.readFile("/c/bob.json")])
        XCTAssertEqual(machine.handle(event(3, .create, "new.vcf")), [.readFileIfComplete("/c/work/team/new.vcf")])
        XCTAssertEqual(machine.handle(event(2, .delete, "ann.vcf")), [.forgetFile("/c/work/ann.vcf")])
        XCTAssertEqual(machine.handle(event(2, .movedFrom, "ann.vcf")), [.forgetFile("/c/work/ann.vcf")])
        for ignored in [".hidden.vcf", "draft.vcf.tmp", "ann.vcf~", "displayname", "color", "notes.txt", "4913"] {
            XCTAssertEqual(machine.handle(event(2, .closeWrite, ignored)), [], ignored)
            XCTAssertEqual(machine.handle(event(2, .movedTo, ignored)), [], ignored)
        }
        XCTAssertEqual(machine.handle(event(99, .closeWrite, "stale.vcf")), [], "a watch already forgotten")
    }

    func testFoldersAppearingAreWalkedAndFoldersLeavingAreForgottenWithTheirWatches() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.handle(event(1, [.create, .isDirectory], "home")), [.scanTree("/c/home", .appeared)])
        XCTAssertEqual(machine.handle(event(1, [.movedTo, .isDirectory], "moved-in")), [.scanTree("/c/moved-in", .appeared)])
        XCTAssertEqual(machine.handle(event(1, [.create, .isDirectory], ".git")), [], "hidden folders are not part of the tree")
        XCTAssertEqual(machine.handle(event(1, [.movedFrom, .isDirectory], "work")),
                       [.removeWatches([2, 3]), .forgetTree("/c/work")])
        XCTAssertNil(machine.descriptor(of: "/c/work/team"))
        XCTAssertEqual(machine.handle(event(3, .closeWrite, "late.vcf")), [], "events of the moved-out folder are dropped")
        XCTAssertEqual(machine.watchedFolderCount, 1)
    }

    func testADeletedFolderIsForgottenOnceAndItsWatchDropsWhenTheKernelSaysSo() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.handle(event(3, .deleteSelf)), [], "the parent's IN_DELETE names it")
        XCTAssertEqual(machine.handle(event(3, .ignored)), [])
        XCTAssertNil(machine.descriptor(of: "/c/work/team"))
        XCTAssertEqual(machine.handle(event(2, [.delete, .isDirectory], "team")), [.forgetTree("/c/work/team")])
        XCTAssertEqual(machine.health, .watching)
    }

    func testOverflowRescansTheRootAndTheWalkDropsWatchesOfFoldersThatAreGone() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.handle(event(-1, .queueOverflow)), [.scanTree("/c", .overflow)])
        // During the lost events "work" was renamed to "job" and "team" deleted: the kernel
        // hands back wd 2 for the renamed folder.
        XCTAssertEqual(machine.watchAdded(folder: "/c", descriptor: 1), [])
        XCTAssertEqual(machine.watchAdded(folder: "/c/job", descriptor: 2), [])
        XCTAssertEqual(machine.treeScanned("/c", folders: ["/c", "/c/job"]), [.removeWatches([3])])
        XCTAssertEqual(machine.descriptor(of: "/c/job"), 2)
        XCTAssertNil(machine.descriptor(of: "/c/work"))
        XCTAssertEqual(machine.handle(event(2, .closeWrite, "a.vcf")), [.readFile("/c/job/a.vcf")])
    }

    func testAPathThatNowNamesAnotherFolderDropsTheOldWatch() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.watchAdded(folder: "/c/work", descriptor: 7), [.removeWatches([2])])
        XCTAssertEqual(machine.handle(event(2, .closeWrite, "a.vcf")), [])
        XCTAssertEqual(machine.handle(event(7, .closeWrite, "a.vcf")), [.readFile("/c/work/a.vcf")])
    }

    func testTheRootDeletedAndCreatedAgainIsReattachedThroughItsParent() {
        var machine = attachedMachine()
        let lost = machine.handle(event(1, .deleteSelf))
        XCTAssertEqual(lost, [.removeWatches([1, 2, 3]), .forgetTree("/c"), .watchParent("/"), .scanTree("/c", .attach)])
        XCTAssertEqual(machine.health, .reattaching)
        XCTAssertTrue(machine.needsPeriodicWork)
        XCTAssertEqual(machine.handle(event(1, .ignored)), [], "the root's own IN_IGNORED after it was forgotten")
        XCTAssertEqual(machine.parentWatchAdded(descriptor: 9), [])
        XCTAssertEqual(machine.treeMissing("/c"), [], "the re-check found nothing yet; the parent watch will tell")
        XCTAssertEqual(machine.handle(event(9, [.create, .isDirectory], "other")), [])
        XCTAssertEqual(machine.handle(event(9, [.create, .isDirectory], "c")), [.scanTree("/c", .attach)])
        XCTAssertEqual(machine.watchAdded(folder: "/c", descriptor: 10), [])
        XCTAssertEqual(machine.treeScanned("/c", folders: ["/c"]), [.removeWatches([9])], "the parent is watched only while waiting")
        XCTAssertEqual(machine.health, .watching)
        XCTAssertEqual(machine.handle(event(9, [.create, .isDirectory], "c")), [], "the parent watch is gone")
    }

    func testTheRootMovedAwayDropsEveryWatchBecauseTheyNowReportFromElsewhere() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.handle(event(1, .moveSelf)).first, .removeWatches([1, 2, 3]))
        XCTAssertEqual(machine.health, .reattaching)
        XCTAssertEqual(machine.handle(event(2, .closeWrite, "a.vcf")), [])
    }

    func testAMissingRootAtStartIsAwaitedWithAParentWatchOrPeriodicRetries() {
        var machine = WatcherStateMachine(root: "/home/u/contacts")
        XCTAssertEqual(machine.treeMissing("/home/u/contacts"), [.watchParent("/home/u"), .scanTree("/home/u/contacts", .attach)])
        XCTAssertEqual(machine.parentWatchFailed(), [])
        XCTAssertEqual(machine.treeMissing("/home/u/contacts"), [], "no retry loop")
        XCTAssertTrue(machine.needsPeriodicWork)
        XCTAssertEqual(machine.periodicTick(), [.scanTree("/home/u/contacts", .attach)])
        XCTAssertEqual(machine.treeMissing("/home/u/contacts"), [.watchParent("/home/u"), .scanTree("/home/u/contacts", .attach)],
                       "each tick tries the parent once more")
        XCTAssertEqual(machine.parentWatchAdded(descriptor: 4), [])
        XCTAssertEqual(machine.handle(event(4, .deleteSelf)), [], "the parent went too: periodic retries remain")
        XCTAssertEqual(machine.health, .reattaching)
    }

    func testTheWatchLimitDegradesATreeThatIsRescannedUntilAWatchFitsAgain() {
        var machine = WatcherStateMachine(root: "/c")
        _ = machine.watchAdded(folder: "/c", descriptor: 1)
        XCTAssertEqual(machine.watchFailed(folder: "/c/big", errno: ENOSPC, reason: "limit"), [])
        XCTAssertFalse(machine.shouldWatch("/c/big/inner"), "nothing below a degraded folder is tried")
        XCTAssertTrue(machine.shouldWatch("/c/big"), "the folder itself is retried")
        XCTAssertTrue(machine.shouldWatch("/c/bigger"))
        XCTAssertEqual(machine.watchFailed(folder: "/c/gone", errno: ENOENT, reason: "gone"), [], "not a shortage")
        XCTAssertEqual(machine.watchFailed(folder: "/c/secret", errno: EACCES, reason: "denied"), [])
        XCTAssertEqual(machine.treeScanned("/c", folders: ["/c", "/c/big", "/c/big/inner", "/c/secret"]), [])
        XCTAssertEqual(machine.health, .degraded(trees: ["/c/big"], reason: "limit"))
        XCTAssertTrue(machine.needsPeriodicWork)
        XCTAssertEqual(machine.periodicTick(), [.scanTree("/c/big", .periodic)])

        // Still full at the next tick.
        XCTAssertEqual(machine.watchFailed(folder: "/c/big", errno: ENOSPC, reason: "limit"), [])
        XCTAssertEqual(machine.treeScanned("/c/big", folders: ["/c/big", "/c/big/inner"]), [])
        XCTAssertEqual(machine.health, .degraded(trees: ["/c/big"], reason: "limit"))

        // A watch fits again: the tree recovers, its subfolders are watched in the same walk.
        XCTAssertEqual(machine.watchAdded(folder: "/c/big", descriptor: 5), [])
        XCTAssertTrue(machine.shouldWatch("/c/big/inner"))
        XCTAssertEqual(machine.watchAdded(folder: "/c/big/inner", descriptor: 6), [])
        XCTAssertEqual(machine.treeScanned("/c/big", folders: ["/c/big", "/c/big/inner"]), [])
        XCTAssertEqual(machine.health, .watching)
        XCTAssertFalse(machine.needsPeriodicWork)
    }

    func testADegradedTreeThatIsDeletedOrSwallowedStopsBeingDegraded() {
        var machine = attachedMachine()
        _ = machine.watchFailed(folder: "/c/work/team/x", errno: ENOSPC, reason: "limit")
        _ = machine.watchFailed(folder: "/c/home", errno: ENOMEM, reason: "memory")
        XCTAssertEqual(machine.degradedTrees, ["/c/work/team/x", "/c/home"])
        _ = machine.watchFailed(folder: "/c/work", errno: ENOSPC, reason: "limit")
        XCTAssertEqual(machine.degradedTrees, ["/c/work", "/c/home"], "a degraded folder swallows degraded folders below it")
        _ = machine.handle(event(1, [.delete, .isDirectory], "home"))
        XCTAssertEqual(machine.degradedTrees, ["/c/work"])
        XCTAssertEqual(machine.treeScanned("/c", folders: ["/c"]), [.removeWatches([2, 3])], "work is gone from disk")
        XCTAssertEqual(machine.health, .watching)
    }

    func testTheRootItselfUnwatchableIsRescannedAndItsDisappearanceFoundByTheRescan() {
        var machine = WatcherStateMachine(root: "/c")
        _ = machine.watchFailed(folder: "/c", errno: ENOSPC, reason: "limit")
        _ = machine.treeScanned("/c", folders: ["/c", "/c/a"])
        XCTAssertEqual(machine.health, .degraded(trees: ["/c"], reason: "limit"))
        XCTAssertEqual(machine.periodicTick(), [.scanTree("/c", .periodic)])
        XCTAssertEqual(machine.treeMissing("/c"), [.forgetTree("/c"), .watchParent("/"), .scanTree("/c", .attach)])
        XCTAssertEqual(machine.health, .reattaching)
    }

    func testReloadRescansAndDetachForgetsEverything() {
        var machine = attachedMachine()
        XCTAssertEqual(machine.reloadRequested(), [.scanTree("/c", .reload)])
        XCTAssertEqual(machine.detach(), [.removeWatches([1, 2, 3]), .forgetTree("/c")])
        XCTAssertEqual(machine.health, .reattaching)
        XCTAssertEqual(machine.reloadRequested(), [.scanTree("/c", .attach)])
    }

    func testCoalescingKeepsOnlyTheLastActionPerFileAndNothingBeforeARootRescan() {
        let burst: [Action] = [
            .readFileIfComplete("/c/a.vcf"), .readFile("/c/a.vcf"), .forgetFile("/c/b.vcf"), .readFile("/c/a.vcf"),
            .scanTree("/c/new", .appeared), .readFile("/c/b.vcf"),
        ]
        XCTAssertEqual(WatcherStateMachine.coalesce(burst, root: "/c"), [
            .readFile("/c/a.vcf"), .scanTree("/c/new", .appeared), .readFile("/c/b.vcf"),
        ])
        let overflowed: [Action] = [
            .readFile("/c/a.vcf"), .removeWatches([4]), .forgetTree("/c/x"), .scanTree("/c/y", .appeared),
            .scanTree("/c", .overflow), .readFile("/c/z.vcf"),
        ]
        XCTAssertEqual(WatcherStateMachine.coalesce(overflowed, root: "/c"), [
            .removeWatches([4]), .scanTree("/c", .overflow), .readFile("/c/z.vcf"),
        ])
        // Re-attaching after the root was lost must still forget the old tree first.
        var machine = attachedMachine()
        let lost = [.forgetFile("/c/a.vcf")] + machine.handle(event(1, .deleteSelf))
        XCTAssertEqual(WatcherStateMachine.coalesce(lost, root: "/c"), lost)
    }

    func testHealthIsReportedForStatus() {
        let info = WatcherHealth.degraded(trees: ["/c/a"], reason: "the inotify watch limit fs.inotify.max_user_watches is reached")
            .info(root: "/c", retryInterval: .seconds(30))
        XCTAssertEqual(info.state, "degraded")
        XCTAssertEqual(info.degradedTrees, ["/c/a"])
        XCTAssertTrue(info.message?.contains("max_user_watches") == true && info.message?.contains("every 30 s") == true, info.message ?? "")
        XCTAssertEqual(WatcherHealth.watching.info(root: "/c", retryInterval: .seconds(1)).state, "watching")
        XCTAssertEqual(WatcherHealth.reattaching.info(root: "/c", retryInterval: .seconds(1)).state, "reattaching")
        XCTAssertEqual(Duration.milliseconds(200).wholeSeconds, 1)
        XCTAssertEqual(Duration.milliseconds(2600).wholeSeconds, 3)
    }

    // MARK: Files with a writer

    func testAWriterFoundAfterACloseIsProbedAgainOnABackoffUntilItIsGone() {
        var machine = attachedMachine()
        let start = ContinuousClock.now
        let read = machine.handle(event(2, .closeWrite, "ann.vcf"))
        XCTAssertEqual(read, [.readFile("/c/work/ann.vcf")])
        // The kernel still counts the writer whose close queued the event: no read now, and
        // no later event will come, so the machine itself must come back to the file.
        XCTAssertNil(machine.probed(.readFile("/c/work/ann.vcf"), .writerOpen, now: start))
        XCTAssertEqual(machine.writerWaits["/c/work/ann.vcf"]?.since, start)
        XCTAssertEqual(machine.nextWriterProbe, start + .milliseconds(1))
        XCTAssertEqual(machine.writerProbesDue(now: start), [], "not due before its backoff")
        let due = machine.writerProbesDue(now: start + .milliseconds(1))
        XCTAssertEqual(due, [.readFile("/c/work/ann.vcf")])

        // Still a writer: the wait goes on from the same instant, probed less often.
        XCTAssertNil(machine.probed(due[0], .writerOpen, now: start + .milliseconds(1)))
        XCTAssertEqual(machine.writerWaits["/c/work/ann.vcf"]?.since, start, "since the first writer found")
        XCTAssertEqual(machine.nextWriterProbe, start + .milliseconds(3))

        // Gone: the read goes ahead and the file no longer waits.
        XCTAssertEqual(machine.probed(due[0], .noWriter, now: start + .milliseconds(3)), .readFile("/c/work/ann.vcf"))
        XCTAssertTrue(machine.writerWaits.isEmpty)
        XCTAssertNil(machine.nextWriterProbe)
    }

    func testTheBackoffGrowsToOneProbeASecondAndNoFurther() {
        XCTAssertEqual(WatcherStateMachine.writerProbeBackoff(afterProbes: 0), .milliseconds(1))
        XCTAssertEqual(WatcherStateMachine.writerProbeBackoff(afterProbes: 3), .milliseconds(8))
        XCTAssertEqual(WatcherStateMachine.writerProbeBackoff(afterProbes: 10), .milliseconds(1024))
        XCTAssertEqual(WatcherStateMachine.writerProbeBackoff(afterProbes: 1000), .milliseconds(1024))
    }

    func testACreatedFileStillBeingWrittenIsForgottenAndAwaitedAFinishedOneIsRead() {
        var machine = attachedMachine()
        let now = ContinuousClock.now
        XCTAssertEqual(machine.probed(.readFileIfComplete("/c/new.vcf"), .writerOpen, now: now), .forgetFile("/c/new.vcf"))
        XCTAssertNotNil(machine.writerWaits["/c/new.vcf"])
        // Its close may bring no event (a file linked in while still open, as QSaveFile does):
        // it is probed again on the backoff.
        XCTAssertEqual(machine.nextWriterProbe, now + .milliseconds(1))
        XCTAssertEqual(machine.writerProbesDue(now: now), [])
        XCTAssertEqual(machine.writerProbesDue(now: now + .milliseconds(1)), [.readFile("/c/new.vcf")])
        XCTAssertEqual(machine.probed(.readFileIfComplete("/c/link.vcf"), .noWriter, now: now), .readFileIfComplete("/c/link.vcf"))
        XCTAssertEqual(machine.probed(.readFileIfComplete("/c/nolease.vcf"), .unknown, now: now), .readFileIfComplete("/c/nolease.vcf"))
        XCTAssertEqual(machine.probed(.readFile("/c/nolease.vcf"), .unknown, now: now), .readFile("/c/nolease.vcf"))
        XCTAssertEqual(Set(machine.writerWaits.keys), ["/c/new.vcf"])
        machine.writerFoundDuringWalk("/c/work/walked.vcf", now: now)
        XCTAssertEqual(Set(machine.writerWaits.keys), ["/c/new.vcf", "/c/work/walked.vcf"])
        XCTAssertEqual(machine.nextWriterProbe, now + .milliseconds(1), "the walked file waits for its close, with no timer of its own")
        // Probed again and still open: the backoff grows.
        XCTAssertNil(machine.probed(.readFile("/c/new.vcf"), .writerOpen, now: now + .seconds(1)))
        XCTAssertEqual(machine.writerWaits["/c/new.vcf"]?.since, now, "waiting since the creation")
        XCTAssertEqual(machine.nextWriterProbe, now + .seconds(1) + .milliseconds(2))
    }

    func testAWaitingFileThatIsDeletedOrLeavesWithItsFolderOrTheRootWaitsNoMore() {
        var machine = attachedMachine()
        let now = ContinuousClock.now
        for path in ["/c/a.vcf", "/c/work/b.vcf", "/c/work/team/c.vcf"] {
            XCTAssertNil(machine.probed(.readFile(path), .writerOpen, now: now))
        }
        XCTAssertEqual(machine.handle(event(1, .delete, "a.vcf")), [.forgetFile("/c/a.vcf")])
        XCTAssertEqual(Set(machine.writerWaits.keys), ["/c/work/b.vcf", "/c/work/team/c.vcf"])
        _ = machine.handle(event(2, [.delete, .isDirectory], "team"))
        XCTAssertEqual(Set(machine.writerWaits.keys), ["/c/work/b.vcf"])
        _ = machine.handle(event(1, .deleteSelf))
        XCTAssertTrue(machine.writerWaits.isEmpty)
        XCTAssertNil(machine.nextWriterProbe)
    }

    func testTheQueueIsReadAgainOnlyAfterAFinishedCreationAndAtMostFourTimes() {
        XCTAssertTrue(WatcherStateMachine.readsQueueAgain(afterFinishedCreations: true, rereadsSoFar: 0))
        XCTAssertTrue(WatcherStateMachine.readsQueueAgain(afterFinishedCreations: true, rereadsSoFar: 3))
        XCTAssertFalse(WatcherStateMachine.readsQueueAgain(afterFinishedCreations: true, rereadsSoFar: 4), "a batch must end")
        XCTAssertFalse(WatcherStateMachine.readsQueueAgain(afterFinishedCreations: false, rereadsSoFar: 0))
    }
}
