import Foundation
import XCTest

/// The real `desktop-file-validate` on `path`: no error and no warning. A missing tool skips
/// (fails under `CI=true`, where `scripts/install-deps --test` installs it).
public func assertDesktopFileValid(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let result = runCommand(["desktop-file-validate", path])
    if result.status == 127 {
        throw unavailable("desktop-file-validate is not installed (apt-get install desktop-file-utils)", file: file, line: line)
    }
    XCTAssertEqual(result.status, 0, result.output, file: file, line: line)
    XCTAssertEqual(result.output, "", "no warnings either", file: file, line: line)
}
