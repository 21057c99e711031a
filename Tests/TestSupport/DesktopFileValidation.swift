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

/// The value of `key` in the group `[group]` of a desktop entry's text, as written (no escapes
/// undone): enough for the paths and names the tests compare.
public func desktopEntryValue(_ text: String, key: String, group: String = "Desktop Entry") -> String? {
    var inGroup = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("[") {
            inGroup = line == "[\(group)]"
        } else if inGroup, line.hasPrefix(key + "=") {
            return String(line.dropFirst(key.count + 1))
        }
    }
    return nil
}
