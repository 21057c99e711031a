import Contacts
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import QuickActions
import TestSupport
import XCTest

@testable import QuickActionsDaemon

final class ParallelWorkTests: XCTestCase {
    /// Holds a reader with a long job, as a scan would, until `release` is signalled;
    /// `holding` counts the long jobs that started.
    private func holdAReader() -> (release: DispatchSemaphore, holding: NIOLockedValueBox<Int>) {
        let release = DispatchSemaphore(value: 0)
        let holding = NIOLockedValueBox(0)
        let holder = Thread {
            ParallelWork.run(workers: 2) { worker in
                guard worker == 1 else { return }
                holding.withLockedValue { $0 += 1 }
                release.wait()
            }
        }
        holder.start()
        XCTAssertTrue(waitUntil { holding.withLockedValue { $0 } == 1 }, "a reader took the long job")
        return (release, holding)
    }

    /// Work for idle readers runs every worker exactly once, and does not wait for a reader busy
    /// with other work (a scan): what a reader cannot take, the caller does.
    func testWorkForIdleReadersNeverWaitsForABusyReader() {
        let (release, holding) = holdAReader()
        defer { release.signal() }

        let counts = NIOLockedValueBox([0, 0, 0])
        let done = NIOLockedValueBox(false)
        let caller = Thread {
            ParallelWork.runOnIdleReaders(workers: 3) { worker in counts.withLockedValue { $0[worker] += 1 } }
            done.withLockedValue { $0 = true }
        }
        caller.start()
        XCTAssertTrue(waitUntil { done.withLockedValue { $0 } }, "finished while the other reader was still busy")
        XCTAssertEqual(counts.withLockedValue { $0 }, [1, 1, 1])
        XCTAssertEqual(holding.withLockedValue { $0 }, 1, "the long job was still running")
    }

    func testOneWorkerRunsOnTheCaller() {
        let caller = Thread.current
        let ranHere = NIOLockedValueBox(false)
        ParallelWork.runOnIdleReaders(workers: 1) { worker in
            ranHere.withLockedValue { $0 = worker == 0 && Thread.current == caller }
        }
        XCTAssertTrue(ranHere.withLockedValue { $0 })
    }

    /// A map on idle readers only gives each index's value in its place, whether a reader took
    /// some of the work or (one busy with a long job) the caller did it all, and spinning for
    /// the readers' end changes nothing but how the caller waits.
    func testAMapOnIdleReadersGivesEveryValueInItsPlaceWhenAReaderIsBusyToo() {
        let expected = (0..<1000).map { $0 * $0 }
        XCTAssertEqual(ParallelWork.map(count: 1000, chunk: 7, idleReadersOnly: true) { $0 * $0 }, expected)
        let (release, _) = holdAReader()
        XCTAssertEqual(ParallelWork.map(count: 1000, chunk: 7, idleReadersOnly: true) { $0 * $0 }, expected)
        release.signal()
        XCTAssertEqual(ParallelWork.map(count: 3, chunk: 64, idleReadersOnly: true) { $0 + 1 }, [1, 2, 3])
        XCTAssertEqual(ParallelWork.map(count: 0, chunk: 64, idleReadersOnly: true) { $0 }, [])
    }

    /// The core's derivation of a large set on idle readers gives the set derived in one go.
    func testTheCoreDerivesALargeSetOnIdleReadersAsInOneGo() {
        let favorites = (0..<1000).map { Contact(identifier: "id\($0)", name: "N\($0)", email: "n\($0)@example.org", favorite: true) }
        for _ in 0..<5 {
            let parts = dynamicItemParts(for: favorites, appVersion: "7", configuration: DynamicItemConfiguration(), parallelMap: DaemonCore.deriveOnIdleReaders)
            XCTAssertEqual(parts.flatMap(\.elements), dynamicItems(for: favorites, appVersion: "7", configuration: DynamicItemConfiguration()))
        }
    }
}
