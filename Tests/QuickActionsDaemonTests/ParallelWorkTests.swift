import Foundation
import NIOConcurrencyHelpers
import XCTest

@testable import QuickActionsDaemon

final class ParallelWorkTests: XCTestCase {
    /// Every worker runs exactly once, worker 0 on the caller, and the call returns only once
    /// all of them have.
    func testEveryWorkerRunsOnceAndTheFirstOnTheCaller() {
        let caller = Thread.current
        let counts = NIOLockedValueBox([0, 0, 0])
        let firstRanHere = NIOLockedValueBox(false)
        ParallelWork.run(workers: 3) { worker in
            counts.withLockedValue { $0[worker] += 1 }
            if worker == 0 { firstRanHere.withLockedValue { $0 = Thread.current == caller } }
        }
        XCTAssertEqual(counts.withLockedValue { $0 }, [1, 1, 1])
        XCTAssertTrue(firstRanHere.withLockedValue { $0 })
    }
}
