import Glibc
import TestSupport
import XCTest

@testable import Varlink

final class VarlinkClientTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder("varlink-client")
    }

    func testMissingSocketIsDaemonUnreachable() {
        let path = folder + "/missing.sock"
        XCTAssertThrowsError(try VarlinkClient(unixSocketPath: path)) { error in
            guard case .daemonUnreachable(let reportedPath, let reason)? = error as? VarlinkClientError else {
                return XCTFail("unexpected \(error)")
            }
            XCTAssertEqual(reportedPath, path)
            XCTAssertEqual(reason, "No such file or directory")
            XCTAssertTrue("\(error)".contains("'\(path)'"))
        }
    }

    func testSocketWithoutListenerIsDaemonUnreachable() throws {
        let path = folder + "/stale.sock"
        let fd = try boundUnixSocket(at: path)
        defer { close(fd) }
        XCTAssertThrowsError(try VarlinkClient(unixSocketPath: path)) { error in
            XCTAssertEqual(error as? VarlinkClientError, .daemonUnreachable(path: path, reason: "Connection refused"))
        }
    }

    /// A socket that accepts and never answers (a socket unit whose service cannot start)
    /// costs a client with a timeout that timeout, and no more.
    func testASilentSocketTimesOut() throws {
        let path = folder + "/silent.sock"
        let fd = try boundUnixSocket(at: path, backlog: 1)
        defer { close(fd) }
        var clients: [VarlinkClient] = []
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        // The backlog holds the first connections; one of the next waits for room until the timeout.
        var failure: VarlinkClientError?
        for _ in 0..<8 {
            do {
                let client = try VarlinkClient(unixSocketPath: path, timeoutMilliseconds: 200)
                clients.append(client)
                if clients.count == 1 {
                    XCTAssertThrowsError(try client.call("org.varlink.service.GetInfo")) { error in
                        XCTAssertEqual(error as? VarlinkClientError, .timedOut(path: path, milliseconds: 200))
                        XCTAssertEqual("\(error)", "The daemon at '\(path)' did not answer within 200 ms.")
                    }
                }
            } catch {
                failure = error
                break
            }
        }
        XCTAssertEqual(failure, .timedOut(path: path, milliseconds: 200), "a connect to a full backlog times out")
        var end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &end)
        XCTAssertLessThan(end.tv_sec - start.tv_sec, 10)
    }

    func testOverlongPathIsRejectedBeforeConnecting() {
        let path = "/tmp/" + String(repeating: "x", count: 200)
        XCTAssertThrowsError(try VarlinkClient(unixSocketPath: path)) { error in
            guard case .daemonUnreachable? = error as? VarlinkClientError else { return XCTFail("unexpected \(error)") }
        }
    }
}
