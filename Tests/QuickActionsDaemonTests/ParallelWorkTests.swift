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

    /// A map gives each index's value in its place, however the chunks fall among the workers.
    func testAMapGivesEveryValueInItsPlace() {
        XCTAssertEqual(ParallelWork.map(count: 1000, chunk: 7) { $0 * $0 }, (0..<1000).map { $0 * $0 })
        XCTAssertEqual(ParallelWork.map(count: 3, chunk: 64) { $0 + 1 }, [1, 2, 3])
        XCTAssertEqual(ParallelWork.map(count: 0, chunk: 64) { $0 }, [])
    }
}
