import XCTest

@testable import QuickActionsDaemon

/// Where `DynamicItems=auto` puts the favorites, as the quicklist's readers come and go, on a
/// clock of the test's own.
final class DynamicItemsPlacementTests: XCTestCase {
    private let start = ContinuousClock.now

    func testTheFirstExportWaitsForTheQuicklistsAnswerAtMostASecond() {
        var placement = DynamicItemsPlacement(now: start)
        XCTAssertTrue(placement.isUndecided)
        XCTAssertEqual(placement.deadline, start + .seconds(1))
        placement.tick(now: start + .milliseconds(999))
        XCTAssertTrue(placement.isUndecided)
        placement.tick(now: start + .seconds(1))
        XCTAssertFalse(placement.isUndecided, "no answer in a second: as without a reader")
        XCTAssertTrue(placement.entryHoldsDynamicItems(.auto))
        XCTAssertNil(placement.deadline)
    }

    func testAReaderTakesThemOutOfTheEntryAndTheEntryGetsThemBackOnlyAfterTheHold() {
        var placement = DynamicItemsPlacement(now: start)
        placement.readers(["com.canonical.Unity"], now: start)
        XCTAssertFalse(placement.isUndecided)
        XCTAssertFalse(placement.entryHoldsDynamicItems(.auto))
        placement.readers([], now: start + .seconds(10))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.auto), "a reader just left: held")
        XCTAssertEqual(placement.deadline, start + .seconds(13))
        // It comes back within the hold (a dock restarting): nothing moves.
        placement.readers(["com.canonical.Unity"], now: start + .seconds(11))
        placement.tick(now: start + .seconds(14))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.auto))
        placement.readers([], now: start + .seconds(20))
        placement.tick(now: start + .milliseconds(22_999))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.auto))
        placement.tick(now: start + .seconds(23))
        XCTAssertTrue(placement.entryHoldsDynamicItems(.auto), "gone for the hold: back in the entry")
    }

    func testNoReaderAtTheStartDecidesAtOnceAndTheExplicitSettingsIgnoreTheReaders() {
        var placement = DynamicItemsPlacement(now: start)
        placement.readers([], now: start)
        XCTAssertFalse(placement.isUndecided)
        XCTAssertTrue(placement.entryHoldsDynamicItems(.auto))
        XCTAssertTrue(placement.entryHoldsDynamicItems(.desktopEntry))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.quicklist))
        placement.readers(["io.qactd.ShellExtension"], now: start)
        XCTAssertTrue(placement.entryHoldsDynamicItems(.desktopEntry))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.quicklist))
        XCTAssertFalse(placement.entryHoldsDynamicItems(.auto))
    }
}
