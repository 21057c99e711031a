import Glibc
import SystemCalls
import XCTest

final class PathsAndEnvironmentTests: XCTestCase {
    func testDirectoryEntryNamesListsAFolderWithoutDotEntries() throws {
        let folder = "/tmp/qactd-entries-\(getpid())"
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        defer { _ = system("rm -rf '\(folder)'") }
        let long = String(repeating: "n", count: 255)
        for name in ["a.desktop", "b c", long] {
            XCTAssertEqual(close(open(folder + "/" + name, O_CREAT | O_WRONLY, 0o600)), 0)
        }
        XCTAssertEqual(mkdir(folder + "/sub", 0o700), 0)
        XCTAssertEqual(try directoryEntryNames(folder).sorted(), ["a.desktop", "b c", long, "sub"].sorted())
        XCTAssertThrowsError(try directoryEntryNames(folder + "/missing")) { error in
            XCTAssertEqual(error as? SystemCallError, SystemCallError(call: "opendir", path: folder + "/missing", errno: ENOENT))
        }
        XCTAssertThrowsError(try directoryEntryNames(folder + "/a.desktop")) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, ENOTDIR)
        }
    }

    func testParentFolderIsWhatComesBeforeTheLastSlash() {
        XCTAssertEqual(parentFolder(of: "/etc/qactd/shortcuts.plist"), "/etc/qactd")
        XCTAssertEqual(parentFolder(of: "/shortcuts.plist"), "/")
        XCTAssertEqual(parentFolder(of: "shortcuts.plist"), ".")
        XCTAssertEqual(parentFolder(of: "items/shortcuts.plist"), "items")
        XCTAssertEqual(parentFolder(of: "/a/b/"), "/a")
        XCTAssertEqual(parentFolder(of: "/"), "/")
    }

    func testEnvironmentVariablesReadWhatSetenvWrote() {
        XCTAssertEqual(setenv("QACTD_TEST_VARIABLE", "a=b c", 1), 0)
        defer { unsetenv("QACTD_TEST_VARIABLE") }
        XCTAssertEqual(environmentVariables()["QACTD_TEST_VARIABLE"], "a=b c")
        XCTAssertTrue(environmentEntries().contains("QACTD_TEST_VARIABLE=a=b c"))
        XCTAssertEqual(environmentVariables()["PATH"], String(cString: getenv("PATH")))
    }
}
