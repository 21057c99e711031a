import Glibc
import SystemCalls
import XCTest

final class SystemCallTests: XCTestCase {
    func testErrorNamesCallPathAndReason() {
        XCTAssertThrowsError(try retryingSystemCall("open", path: "/nonexistent/x") { open("/nonexistent/x", O_RDONLY) }) { error in
            XCTAssertEqual(error as? SystemCallError, SystemCallError(call: "open", path: "/nonexistent/x", errno: ENOENT))
            XCTAssertEqual("\(error)", "open(\"/nonexistent/x\") failed: No such file or directory (errno 2).")
        }
        XCTAssertEqual(SystemCallError(call: "fsync", errno: EIO).description, "fsync() failed: Input/output error (errno 5).")
    }

    func testEINTRIsRetried() throws {
        var attempts = 0
        let result = try retryingSystemCall("read") { () -> Int in
            attempts += 1
            if attempts < 3 {
                errno = EINTR
                return -1
            }
            return 9
        }
        XCTAssertEqual(result, 9)
        XCTAssertEqual(attempts, 3)
    }

    func testMakeDirectoriesCreatesEveryMissingFolderWithTheModeAndLeavesExistingOnes() throws {
        let base = "/tmp/qactd-mkdir-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { _ = try? FileManagerless.removeTree(base) }
        try makeDirectories(base + "/a/b/c", mode: 0o700)
        var info = stat()
        XCTAssertEqual(stat(base + "/a/b/c", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        try makeDirectories(base + "/a/b/c", mode: 0o755)  // all there: nothing to do, no error
        XCTAssertEqual(stat(base + "/a", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700, "an existing folder keeps its mode")
        XCTAssertEqual(creat(base + "/file", 0o600) >= 0, true)
        XCTAssertThrowsError(try makeDirectories(base + "/file/below", mode: 0o700)) { error in
            XCTAssertEqual((error as? SystemCallError)?.call, "mkdir")
            XCTAssertEqual((error as? SystemCallError)?.errno, ENOTDIR)
        }
    }

    func testAUnixSocketAddressRefusesPathsThatDoNotFit() {
        XCTAssertEqual(UnixSocketAddress.maxPathBytes, 107)
        XCTAssertNotNil(UnixSocketAddress(path: "/" + String(repeating: "a", count: 106)))
        XCTAssertNil(UnixSocketAddress(path: "/" + String(repeating: "a", count: 107)), "no room for the NUL")
        XCTAssertNil(UnixSocketAddress(path: ""))
        XCTAssertNil(UnixSocketAddress(path: "/tmp/a\u{0}b"))
        let length = UnixSocketAddress(path: "/run/x.sock")?.withSocketAddress { address, length in
            XCTAssertEqual(Int32(address.pointee.sa_family), AF_UNIX)
            return length
        }
        XCTAssertEqual(length.map(Int.init), MemoryLayout<sockaddr_un>.size)
    }

    func testErrnoTextIsStrerror() {
        XCTAssertEqual(errnoText(ENOENT), "No such file or directory")
    }
}

/// Removes a folder tree without Foundation (the target under test has none).
enum FileManagerless {
    static func removeTree(_ path: String) throws {
        guard let directory = opendir(path) else {
            unlink(path)
            return
        }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            let child = path + "/" + name
            if Int32(entry.pointee.d_type) == Int32(DT_DIR) { try removeTree(child) } else { unlink(child) }
        }
        closedir(directory)
        rmdir(path)
    }
}
