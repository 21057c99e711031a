import Foundation
import XCTest

/// `CI=true`: `scripts/install-deps --test` installed every component a test needs, so nothing
/// may be missing there.
public var isContinuousIntegration: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

/// A component a test needs is missing or did not start (a tool, a package, root for a mount
/// namespace): on a developer's machine the test is skipped, loudly, with `reason`; under
/// `CI=true` it fails. Used as `throw unavailable("…")`. A daemon of our own that does not
/// start is never this: it is a failure everywhere.
public func unavailable(_ reason: String, file: StaticString = #filePath, line: UInt = #line) -> XCTSkip {
    if isContinuousIntegration {
        XCTFail("CI=true, so this cannot be skipped: \(reason)", file: file, line: line)
    }
    return XCTSkip(reason, file: file, line: line)
}
