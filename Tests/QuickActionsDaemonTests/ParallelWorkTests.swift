import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TestSupport
import XCTest

@testable import QuickActionsDaemon

final class ParallelWorkTests: XCTestCase {
    /// Work for idle readers runs every worker exactly once, and does not wait for a reader busy
    /// with other work (a scan): what a reader cannot take, the caller does.
    func testWorkForIdleReadersNeverWaitsForABusyReader() {
        let release = DispatchSemaphore(value: 0)
        let holding = NIOLockedValueBox(0)
        // A long job holds a reader, as a scan would.
        let holder = Thread {
            ParallelWork.run(workers: 2) { worker in
                guard worker == 1 else { return }
                holding.withLockedValue { $0 += 1 }
                release.wait()
            }
        }
        holder.start()
        defer { release.signal() }
        XCTAssertTrue(waitUntil { holding.withLockedValue { $0 } == 1 }, "a reader took the long job")

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
}
