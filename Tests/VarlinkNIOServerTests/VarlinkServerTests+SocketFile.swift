import Foundation
import Glibc
import NIOCore
import TestSupport
import Varlink
import XCTest

@testable import VarlinkNIOServer

extension VarlinkServerTests {
    // MARK: Socket file life cycle

    func testSocketAndFolderModesAndRemovalOnStop() async throws {
        let server = try await fixture.start()
        var status = stat()
        XCTAssertEqual(stat(fixture.socketPath, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o600)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(stat(fixture.folder + "/run", &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o700)
        XCTAssertEqual(server.socketPath, fixture.socketPath)
        await server.stop()
        XCTAssertNotEqual(access(fixture.socketPath, F_OK), 0, "the socket file is removed on stop")
    }

    func testAnExistingSocketFolderOthersMayWriteIsReported() async throws {
        let folder = fixture.folder + "/run"
        XCTAssertEqual(mkdir(fixture.folder, 0o700), 0)
        XCTAssertEqual(mkdir(folder, 0o700), 0)
        for (mode, reported) in [(mode_t(0o777), true), (0o770, true), (0o702, true), (0o1777, false), (0o755, false), (0o700, false)] {
            XCTAssertEqual(chmod(folder, mode), 0)
            let server = fixture.makeServer()
            try await server.listen(unixSocketPath: fixture.socketPath)
            let problem = server.socketFolderProblem
            XCTAssertEqual(problem != nil, reported, "mode \(String(mode, radix: 8)): \(problem ?? "not reported")")
            if reported {
                let octal = String(mode, radix: 8)
                XCTAssertTrue(problem?.contains("'\(folder)' has mode \(octal.count < 4 ? "0" + octal : octal)") == true, problem ?? "")
            }
            await server.stop()
        }
    }

    func testStaleSocketIsReplaced() async throws {
        let first = try await fixture.start()
        let path = fixture.socketPath
        // Simulate a crashed daemon: the listener goes away but its socket file stays.
        let stale = try RawConnection.boundWithoutListening(path: path + ".stale")
        XCTAssertEqual(rename(path + ".stale", path), 0)
        await first.stop()  // removes nothing: the file at the path is no longer the one it created
        XCTAssertEqual(access(path, F_OK), 0)
        close(stale)
        _ = try await fixture.start()
        let info = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info["product"], "testd")
    }

    func testSecondServerIsRefused() async throws {
        _ = try await fixture.start()
        do {
            _ = try await fixture.start()
            XCTFail("a second server must not take over the socket")
        } catch let error as VarlinkServerError {
            XCTAssertEqual(error, .alreadyListening(service: "testd", path: fixture.socketPath))
            XCTAssertEqual("\(error)", "Another testd is already listening on '\(fixture.socketPath)'.")
        }
        let info = try await fixture.call("org.varlink.service.GetInfo")
        XCTAssertEqual(info["product"], "testd", "the first server keeps serving")
    }

    func testNonSocketFileIsNotReplaced() async throws {
        XCTAssertEqual(mkdir(fixture.folder, 0o700), 0)
        XCTAssertEqual(mkdir(fixture.folder + "/run", 0o700), 0)
        XCTAssertTrue(FileManager.default.createFile(atPath: fixture.socketPath, contents: Data("keep".utf8)))
        do {
            _ = try await fixture.start()
            XCTFail("a regular file must not be replaced")
        } catch let error as VarlinkServerError {
            XCTAssertEqual(error, .notASocket(path: fixture.socketPath))
        }
        XCTAssertEqual(try String(contentsOfFile: fixture.socketPath, encoding: .utf8), "keep")
    }

    func testAdoptsASocketActivatedDescriptor() async throws {
        XCTAssertEqual(mkdir(fixture.folder, 0o700), 0)
        let path = fixture.folder + "/activated.sock"
        let descriptor = try RawConnection.boundWithoutListening(path: path)
        XCTAssertEqual(listen(descriptor, 16), 0)
        let server = fixture.makeServer()
        try await server.listen(adoptingDescriptor: descriptor)
        let info = try await offloaded { try VarlinkClient(unixSocketPath: path).call("org.varlink.service.GetInfo") }
        XCTAssertEqual(info["product"], "testd")
        await server.stop()
        XCTAssertEqual(access(path, F_OK), 0, "a socket-activated file belongs to systemd and stays")
    }
}

extension RawConnection {
    /// A socket bound at `path` that nobody accepts on: what a crashed daemon leaves behind.
    static func boundWithoutListening(path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return fd
    }
}
