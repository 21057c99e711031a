import Foundation
import TestSupport
import XCTest

/// The state folder on a tiny tmpfs that fills up, then on one remounted read-only:
/// the write fails, the previous file is intact, the reply, status and log say so, the daemon
/// keeps serving, and the pending state is written once the folder takes writes again, with
/// no further change. The tmpfs lives in a mount namespace of the daemon's own (`unshare -m`),
/// so nothing is mounted on the host; the test reaches it through `/proc/PID/root`.
final class DiskFaultEndToEndTests: XCTestCase {
    private var fixture: DaemonFixture!
    private var daemonPID: Int32 = 0

    override func setUpWithError() throws {
        let tools = ["/usr/bin/unshare", "/usr/bin/nsenter", "/bin/mount"]
        guard getuid() == 0, tools.allSatisfy(FileManager.default.isExecutableFile(atPath:)),
              DaemonFixture.run("/usr/bin/unshare", ["-m", "true"]).status == 0
        else {
            throw unavailable("needs root, unshare -m, nsenter and mount for a tmpfs in a mount namespace of the daemon's own")
        }
        fixture = try DaemonFixture()
        try FileManager.default.createDirectory(at: fixture.stateDirectory, withIntermediateDirectories: true)
        fixture.daemonWrapper = [
            "/usr/bin/unshare", "-m", "--propagation", "private", "/bin/sh", "-c",
            #"mount -t tmpfs -o size=64k,mode=0700 qactd-test-state "$XDG_STATE_HOME/qactd" && exec "$0" "$@""#,
        ]
        daemonPID = try fixture.start().processIdentifier
    }

    override func tearDown() {
        fixture?.stop()
        fixture = nil
    }

    /// A path inside the daemon's mount namespace.
    private func inDaemonNamespace(_ path: URL) -> String { "/proc/\(daemonPID)/root" + path.path }

    private func stateFileBytes() -> Data? { FileManager.default.contents(atPath: inDaemonNamespace(fixture.stateFile)) }

    private func status() throws -> [String: Any] { try fixture.qactl(["status", "--json"]).json() }

    /// Adds a favorite on disk and waits until the index has it, so the next resign-active changes the set.
    private func addFavorite(_ name: String) throws {
        let before = try XCTUnwrap(try status()["favorites"] as? Int)
        try fixture.write(contact: "faults/\(name).vcf", ContactCard.vCard(name, favorite: true, uid: name, category: "favorite", lineEnding: "\n"))
        XCTAssertTrue(waitUntil { ((try? self.status()["favorites"]) as? Int) == before + 1 }, "the index never saw \(name)")
    }

    private func resignActive() throws -> [String: Any] {
        let result = fixture.qactl(["resign-active", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try result.json()
    }

    private func leftoverTemporaryFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: inDaemonNamespace(fixture.stateDirectory)).filter { $0.contains(".tmp-") }
    }

    /// Fails every write until `restore` runs, then expects the pending state on disk with no further change.
    private func checkFault(expectedReason: String, fault: () throws -> Void, restore: () throws -> Void) throws {
        try addFavorite("before-fault")
        let saved = try resignActive()
        XCTAssertEqual(saved["persisted"] as? Bool, true)
        let savedGeneration = try XCTUnwrap(saved["generation"] as? Int)
        let savedBytes = try XCTUnwrap(stateFileBytes())

        try fault()
        try addFavorite("during-fault")
        let unsaved = try resignActive()
        XCTAssertEqual(unsaved["changed"] as? Bool, true)
        XCTAssertEqual(unsaved["persisted"] as? Bool, false, "a generation that exists only in memory was reported as saved")
        let unsavedGeneration = try XCTUnwrap(unsaved["generation"] as? Int)
        XCTAssertEqual(unsavedGeneration, savedGeneration + 1)
        XCTAssertEqual(stateFileBytes(), savedBytes, "the previous state file must stay intact")
        XCTAssertEqual(try leftoverTemporaryFiles(), [])

        let failing = try status()
        XCTAssertEqual(failing["persisted"] as? Bool, false)
        XCTAssertEqual(failing["savedGeneration"] as? Int, savedGeneration)
        XCTAssertTrue((failing["stateError"] as? String)?.contains(expectedReason) == true, "\(failing["stateError"] ?? "no stateError")")
        XCTAssertTrue(fixture.qactl(["status"]).stdout.contains("kept in memory only"))
        XCTAssertTrue(fixture.qactl(["resign-active"]).stdout.contains("not saved"))
        XCTAssertTrue(fixture.log().contains("Could not save the state") && fixture.log().contains(expectedReason), fixture.log())
        // Still serving: the new set is listed from memory.
        let listing = try fixture.qactl(["list", "--json"]).json()
        XCTAssertEqual(listing["generation"] as? Int, unsavedGeneration)

        // A retry failed the same way (its error names the next temporary file): logged once, not once per attempt.
        let firstError = failing["stateError"] as? String
        XCTAssertTrue(waitUntil { ((try? self.status()["stateError"]) as? String).map { $0 != firstError } ?? false }, "no retry")
        XCTAssertEqual(fixture.log().components(separatedBy: "Could not save the state,").count - 1, 1, fixture.log())

        try restore()
        // No further change: the retry timer writes the pending state.
        XCTAssertTrue(waitUntil(timeout: 15) { ((try? self.status()["persisted"]) as? Bool) == true }, "the pending state was never written")
        let written = try XCTUnwrap(stateFileBytes())
        let onDisk = try XCTUnwrap(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        XCTAssertEqual(onDisk["generation"] as? Int, unsavedGeneration)
        XCTAssertNil(try status()["stateError"] as? String)
        XCTAssertTrue(fixture.log().contains("works again"), fixture.log())
        XCTAssertEqual(try leftoverTemporaryFiles(), [])
    }

    func testAFullStateFolderKeepsThePreviousFileSaysSoAndWritesOnceSpaceReturns() throws {
        let filler = inDaemonNamespace(fixture.stateDirectory.appendingPathComponent("filler"))
        try checkFault(
            expectedReason: "No space left on device",
            fault: {
                // cat stops at ENOSPC: the tmpfs is then full to the last block.
                _ = DaemonFixture.run("/bin/sh", ["-c", "cat /dev/zero > '\(filler)'"])
                XCTAssertGreaterThan((try FileManager.default.attributesOfItem(atPath: filler)[.size] as? Int) ?? 0, 0)
            },
            restore: { try FileManager.default.removeItem(atPath: filler) })
    }

    func testAReadOnlyStateFolderKeepsThePreviousFileSaysSoAndWritesOnceWritable() throws {
        // chmod does not stop root: remount the daemon's tmpfs read-only in its own namespace.
        let folder = fixture.stateDirectory.path
        func remount(_ mode: String) {
            let result = DaemonFixture.run("/usr/bin/nsenter", ["-t", "\(daemonPID)", "-m", "/bin/mount", "-o", "remount,\(mode)", folder])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        try checkFault(expectedReason: "Read-only file system", fault: { remount("ro") }, restore: { remount("rw") })
    }
}
