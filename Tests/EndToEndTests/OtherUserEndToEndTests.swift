import Foundation
import TestSupport
import XCTest

/// A client running as another user: the socket serves only its owner, and peers are checked
/// with SO_PEERCRED.
final class OtherUserEndToEndTests: XCTestCase {
    func testAnotherUserIsRefusedWithAClearErrorEveryTimeAndTheRefusalIsLogged() throws {
        let fixture = try DaemonFixture.startedReachableByAnotherUser()
        // A copy of qactl that nobody may run, wherever the build put the original: the executable
        // itself (the link resolved), still named qactl, which makes it the client.
        let folder = fixture.root.appendingPathComponent("for-nobody")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(folder.path, 0o755), 0)
        let qactl = folder.appendingPathComponent("qactl").path
        try FileManager.default.copyItem(atPath: URL(fileURLWithPath: DaemonFixture.qactl).resolvingSymlinksInPath().path, toPath: qactl)
        XCTAssertEqual(chmod(qactl, 0o755), 0)

        // The daemon answers a refused peer and closes at once, often before the call is sent:
        // the client must still report the refusal, not "closed the connection", every time.
        for attempt in 1...20 {
            let result = DaemonFixture.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", qactl, "status", "--socket", fixture.socketPath])
            XCTAssertEqual(result.status, 1, "attempt \(attempt): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("org.varlink.service.PermissionDenied") && result.stderr.contains("does not serve this user"),
                          "attempt \(attempt): \(result.stderr)")
        }
        XCTAssertTrue(fixture.log().contains("Refused a connection from uid 65534"), fixture.log())
        // The owner is still served.
        XCTAssertEqual(fixture.qactl(["status"]).status, 0)
    }

    /// The socket lives in a 0700 folder so that only its owner can reach it; a folder the
    /// user made writable for everyone is still used (it is their choice), but never without
    /// a word.
    func testAnExistingSocketFolderWritableByOthersIsWarnedAbout() throws {
        let fixture = try DaemonFixture()
        let socketFolder = (fixture.socketPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: socketFolder, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(socketFolder, 0o777), 0)
        try fixture.start()
        XCTAssertTrue(fixture.log().contains("The socket folder '\(socketFolder)' has mode 0777"), fixture.log())
        XCTAssertTrue(fixture.log().contains("chmod 0700"), fixture.log())
        fixture.stop()

        XCTAssertEqual(chmod(socketFolder, 0o700), 0)
        try fixture.start()
        XCTAssertEqual(fixture.log().components(separatedBy: "has mode 0").count, 2, "a 0700 folder is not warned about")
    }
}

extension DaemonFixture {
    /// A started daemon whose socket, its folder and the fixture's folder are opened to every
    /// user for the test only (the daemon itself keeps them 0700 and 0600), so that a client run
    /// as another user (through setpriv, as root) reaches it and the daemon's own peer check is
    /// what refuses it.
    static func startedReachableByAnotherUser(file: StaticString = #filePath, line: UInt = #line) throws -> DaemonFixture {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw unavailable("needs root and setpriv to run a client as another user")
        }
        let fixture = try DaemonFixture()
        try fixture.start()
        let socketFolder = (fixture.socketPath as NSString).deletingLastPathComponent
        XCTAssertEqual(chmod(socketFolder, 0o755), 0, file: file, line: line)
        XCTAssertEqual(chmod(fixture.socketPath, 0o666), 0, file: file, line: line)
        XCTAssertEqual(chmod(fixture.root.path, 0o755), 0, file: file, line: line)
        return fixture
    }
}
